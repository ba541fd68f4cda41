/**
 * Redeliveries and poison messages with rhea (docs/broker-features.md#delivery-limit): a message
 * whose consumer was lost comes back with delivery-count + 1; a queue's delivery limit moves a
 * message delivered that many times to `<queue>.dlq`; modified{undeliverable-here} does at once.
 * On the single node and on a cluster follower (rhea-broker.ts).
 */
import { expect } from 'vitest';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { fresh, onEachTarget, type RheaTarget } from './rhea-broker.js';

const depth = async (t: RheaTarget, queue: string) => (await t.counts(queue))?.depth;

onEachTarget(
  'redelivery and poison messages',
  (t, it) => {
    it('counts a delivery whose consumer connection was lost', async () => {
      const q = fresh('lost');
      await sendAll(t.conn, q, [{ body: 'x', message_id: 'lost-1' }]);
      const first = await connect({ port: t.port });
      const a = new TestReceiver(first, q);
      const [got] = await a.next(1);
      expect(got!.message.delivery_count ?? 0).toBe(0);
      await closeConnection(first); // unsettled: the broker gets it back
      const b = new TestReceiver(t.conn, q);
      const [again] = await b.next(1);
      expect(again!.message.message_id).toBe('lost-1');
      expect(again!.message.delivery_count).toBe(1);
      expect(again!.message.first_acquirer ?? false).toBe(false);
      again!.delivery.accept();
      b.link.close();
    });

    it('moves a message modified with delivery-failed up to the limit to <queue>.dlq', async () => {
      const q = fresh('poison');
      await sendAll(t.conn, q, [{ body: 'poison', message_id: 'p-1' }]);
      const r = new TestReceiver(t.conn, q);
      const [one] = await r.next(1);
      one!.delivery.modified({ delivery_failed: true });
      const [two] = await r.next(1);
      expect(two!.message.delivery_count).toBe(1);
      two!.delivery.modified({ delivery_failed: true });
      const dlq = new TestReceiver(t.conn, `${q}.dlq`);
      const [dead] = await dlq.next(1);
      expect(dead!.message.message_id).toBe('p-1');
      expect(dead!.message.delivery_count).toBe(2);
      dead!.delivery.accept();
      expect(await depth(t, q)).toBe(0);
      r.link.close();
      dlq.link.close();
    });

    it('moves a message modified with undeliverable-here to <queue>.dlq at once', async () => {
      const q = fresh('here');
      await sendAll(t.conn, q, [{ body: 'not here', message_id: 'h-1' }]);
      const r = new TestReceiver(t.conn, q);
      const [one] = await r.next(1);
      one!.delivery.modified({ undeliverable_here: true });
      const dlq = new TestReceiver(t.conn, `${q}.dlq`);
      const [dead] = await dlq.next(1);
      expect(dead!.message.message_id).toBe('h-1');
      dead!.delivery.accept();
      expect(await depth(t, q)).toBe(0);
      r.link.close();
      dlq.link.close();
    });
  },
  { deliveryLimit: 2 },
);
