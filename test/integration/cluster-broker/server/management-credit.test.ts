/**
 * Management replies respect the reply link's credit (docs/management.md#back-pressure): a client
 * granting credit 1 gets one reply per credit, in request order, and the broker holds at most
 * MAX_WAITING_FOR_CREDIT unread replies: a request beyond is refused with a clear error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import { MAX_WAITING_FOR_CREDIT } from '../../../../src/cluster-broker/server/virtual-link.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  type RheaMessage,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

const brokers: BrokerHandle[] = [];
const conns: RheaConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) await closeConnection(c).catch(() => undefined);
  for (const b of brokers.splice(0)) await b.stop();
});

const LINK = 'mgmt-pair';

function requests(from: number, n: number): RheaMessage[] {
  // body: rhea types ask for one; a GET has none
  return Array.from({ length: n }, (_, i) => ({
    message_id: from + i,
    reply_to: '$me',
    subject: 'GET',
    to: '/queues',
    body: undefined,
  }));
}

/** The request half of the pair, kept open (its replies go with it); `send` resolves with each outcome. */
function requestLink(conn: RheaConnection) {
  // a session of its own: rhea keys a session's links by name, and the pair shares one
  const session = conn.create_session();
  session.begin();
  const sender = session.open_sender({ name: LINK, target: { address: '/management' } });
  const outcomes = new Map<
    number,
    (o: { state: string; description?: string; condition?: string }) => void
  >();
  const settle = (state: string) => (ctx: { delivery?: unknown }) => {
    const d = ctx.delivery as {
      id: number;
      remote_state?: { error?: { condition?: unknown; description?: string } };
    };
    const err = d.remote_state?.error;
    outcomes.get(d.id)?.({
      state,
      condition: err ? String(err.condition) : undefined,
      description: err?.description,
    });
  };
  sender.on('accepted', settle('accepted'));
  sender.on('rejected', settle('rejected'));
  const opened = new Promise<void>((r) => sender.once('sendable', () => r()));
  return {
    async send(messages: RheaMessage[]) {
      await opened;
      return Promise.all(
        messages.map((m) => {
          const d = sender.send(m) as unknown as { id: number };
          return new Promise<{ state: string; description?: string; condition?: string }>((r) =>
            outcomes.set(d.id, r),
          );
        }),
      );
    },
  };
}

describe('management replies and the reply link credit', () => {
  it('one reply per credit granted, at most MAX_WAITING_FOR_CREDIT held, then requests are refused', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0 });
    brokers.push(b);
    const conn = await connect({ port: b.port });
    conns.push(conn);
    const replies = new TestReceiver(conn, '/management', { name: LINK });
    await replies.opened;

    const requester = requestLink(conn);

    // no credit: every reply waits, up to the bound
    const held = await requester.send(requests(0, MAX_WAITING_FOR_CREDIT));
    expect(held.every((o) => o.state === 'accepted')).toBe(true);
    const [beyond] = await requester.send(requests(1000, 1));
    expect(beyond).toMatchObject({ state: 'rejected', condition: 'amqp:resource-limit-exceeded' });
    expect(beyond!.description).toMatch(/replies wait for credit .*grant it credit/);

    // credit 1: the first reply, and room for exactly one more request
    const [first] = await replies.next(1);
    expect(first!.message.correlation_id).toBe(0);
    expect(first!.message.subject).toBe('200');
    const after = await requester.send(requests(MAX_WAITING_FOR_CREDIT, 2));
    expect(after.map((o) => o.state)).toEqual(['accepted', 'rejected']);

    // one at a time, in request order
    for (let i = 1; i < 4; i++) {
      const [r] = await replies.next(1);
      expect(r!.message.correlation_id).toBe(i);
    }
    const rest = await replies.next(MAX_WAITING_FOR_CREDIT - 3);
    expect(rest.map((r) => r.message.correlation_id)).toEqual(
      Array.from({ length: MAX_WAITING_FOR_CREDIT - 3 }, (_, i) => i + 4),
    );
  });
});
