/**
 * Redeliveries and poison messages with rhea (docs/broker-features.md#delivery-limit): a message
 * whose consumer was lost comes back with delivery-count + 1; a queue's delivery limit moves a
 * message delivered that many times to `<queue>.dlq`; modified{undeliverable-here} does at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

let broker: BrokerHandle;
let conn: RheaConnection;

beforeAll(async () => {
  broker = await startBroker({ port: 0, queueDefaults: { deliveryLimit: 2 } });
  conn = await connect({ port: broker.port });
});
afterAll(async () => {
  await closeConnection(conn);
  await broker.stop();
});

function depth(queue: string): number | undefined {
  return broker.stats().queues.find((q) => q.name === queue)?.depth;
}

describe('redelivery and poison messages (single node)', () => {
  it('counts a delivery whose consumer connection was lost', async () => {
    await sendAll(conn, 'lost-q', [{ body: 'x', message_id: 'lost-1' }]);
    const first = await connect({ port: broker.port });
    const a = new TestReceiver(first, 'lost-q');
    const [got] = await a.next(1);
    expect(got!.message.delivery_count ?? 0).toBe(0);
    await closeConnection(first); // unsettled: the broker gets it back
    const b = new TestReceiver(conn, 'lost-q');
    const [again] = await b.next(1);
    expect(again!.message.message_id).toBe('lost-1');
    expect(again!.message.delivery_count).toBe(1);
    expect(again!.message.first_acquirer ?? false).toBe(false);
    again!.delivery.accept();
    b.link.close();
  });

  it('moves a message modified with delivery-failed up to the limit to <queue>.dlq', async () => {
    await sendAll(conn, 'poison-q', [{ body: 'poison', message_id: 'p-1' }]);
    const r = new TestReceiver(conn, 'poison-q');
    const [one] = await r.next(1);
    one!.delivery.modified({ delivery_failed: true });
    const [two] = await r.next(1);
    expect(two!.message.delivery_count).toBe(1);
    two!.delivery.modified({ delivery_failed: true });
    const dlq = new TestReceiver(conn, 'poison-q.dlq');
    const [dead] = await dlq.next(1);
    expect(dead!.message.message_id).toBe('p-1');
    expect(dead!.message.delivery_count).toBe(2);
    dead!.delivery.accept();
    expect(depth('poison-q')).toBe(0);
    r.link.close();
    dlq.link.close();
  });

  it('moves a message modified with undeliverable-here to <queue>.dlq at once', async () => {
    await sendAll(conn, 'here-q', [{ body: 'not here', message_id: 'h-1' }]);
    const r = new TestReceiver(conn, 'here-q');
    const [one] = await r.next(1);
    one!.delivery.modified({ undeliverable_here: true });
    const dlq = new TestReceiver(conn, 'here-q.dlq');
    const [dead] = await dlq.next(1);
    expect(dead!.message.message_id).toBe('h-1');
    dead!.delivery.accept();
    expect(depth('here-q')).toBe(0);
    r.link.close();
    dlq.link.close();
  });
});
