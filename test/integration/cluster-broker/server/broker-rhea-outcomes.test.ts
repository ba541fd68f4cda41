/**
 * rhea 3.0.5 against our broker, the single node and a cluster follower (rhea-broker.ts), the
 * outcomes of docs/delivery-contract.md#outcomes: released, modified, rejected, the default
 * outcome, rcv-settle-mode second, pre-settled consumers.
 */
import { expect } from 'vitest';
import { sendAll, TestReceiver } from '../../../cluster-broker/server/rhea-client.js';
import { fresh, onEachTarget, waitCounts } from './rhea-broker.js';

onEachTarget('rhea client against the broker', (t, it) => {
  it('released: offered again with delivery-count unchanged, first-acquirer false', async () => {
    const q = fresh('release');
    await sendAll(t.conn, q, [{ body: 'r1', message_id: 'r1' }]);
    const r = new TestReceiver(t.conn, q);
    const [first] = await r.next(1);
    expect(first!.message.first_acquirer).toBe(true);
    first!.delivery.release();
    const [again] = await r.next(1);
    expect(again!.message.body).toBe('r1');
    expect(again!.message.delivery_count ?? 0).toBe(0);
    expect(again!.message.first_acquirer ?? false).toBe(false);
    again!.delivery.accept();
    r.link.close();
  });

  it('modified{deliveryFailed}: delivery-count + 1; settled without outcome: the default outcome', async () => {
    const q = fresh('modified');
    await sendAll(t.conn, q, [{ body: 'm1', message_id: 'm1' }]);
    const r = new TestReceiver(t.conn, q);
    const [a] = await r.next(1);
    a!.delivery.modified({ delivery_failed: true });
    const [b] = await r.next(1);
    expect(b!.message.delivery_count).toBe(1);
    // settle with no outcome: the source's default modified{delivery-failed} applies
    b!.delivery.update(true);
    const [c] = await r.next(1);
    expect(c!.message.delivery_count).toBe(2);
    c!.delivery.accept();
    r.link.close();
  });

  it('advertises the default outcome modified{delivery-failed} on sources', async () => {
    const q = fresh('default-outcome');
    const r = new TestReceiver(t.conn, q);
    await r.opened;
    const src = (r.link as unknown as { remote: { attach: { source: { default_outcome?: unknown } } } })
      .remote.attach.source;
    // rhea leaves the outcome undecoded: descriptor 0x27 (modified), fields [delivery-failed = true]
    const outcome = src.default_outcome as {
      descriptor: { value: number };
      value: Array<{ value: unknown }>;
    };
    expect(outcome.descriptor.value).toBe(0x27);
    expect(outcome.value[0]!.value).toBe(true);
    r.link.close();
  });

  it('modified{undeliverableHere} on a queue without a delivery limit: never again to that link, still to another', async () => {
    const q = fresh('undeliverable');
    await sendAll(t.conn, q, [{ body: 'u1', message_id: 'u1' }]);
    const r1 = new TestReceiver(t.conn, q);
    const [a] = await r1.next(1);
    a!.delivery.modified({ undeliverable_here: true });
    r1.link.add_credit(5);
    expect(await r1.drainFor(400)).toEqual([]);
    const r2 = new TestReceiver(t.conn, q);
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('u1');
    b!.delivery.accept();
    r1.link.close();
    r2.link.close();
  });

  it('rejected: moved to the dead-letter queue <queue>.dlq', async () => {
    const q = fresh('reject');
    await sendAll(t.conn, q, [{ body: 'x1', message_id: 'x1', application_properties: { k: 'v' } }]);
    const r = new TestReceiver(t.conn, q);
    const [a] = await r.next(1);
    a!.delivery.reject({ condition: 'app:bad', description: 'no thanks' });
    const dlq = new TestReceiver(t.conn, `${q}.dlq`);
    const [d] = await dlq.next(1);
    expect(d!.message.body).toBe('x1');
    expect(d!.message.message_id).toBe('x1');
    expect(d!.message.application_properties).toEqual({ k: 'v' });
    d!.delivery.accept();
    r.link.add_credit(1);
    expect(await r.drainFor(200)).toEqual([]);
    r.link.close();
    dlq.link.close();
  });

  it('rcv-settle-mode second: the broker settles after committing the accept', async () => {
    const q = fresh('second');
    await sendAll(t.conn, q, [
      { body: 'a', message_id: 's1' },
      { body: 'b', message_id: 's2' },
    ]);
    const r = new TestReceiver(t.conn, q, { rcv_settle_mode: 1 });
    await r.opened;
    expect(
      (r.link as unknown as { remote: { attach: { rcv_settle_mode: number } } }).remote.attach
        .rcv_settle_mode,
    ).toBe(1);
    const got = await r.next(2);
    // one outcome per tick: rhea 3.0.5 merges different outcomes into one disposition range
    got[0]!.delivery.accept();
    await r.until(() => r.settledDeliveries.length >= 1, 15_000, 'broker settlement');
    got[1]!.delivery.release();
    await r.until(() => r.settledDeliveries.length >= 2, 15_000, 'broker settlement');
    const [again] = await r.next(1);
    expect(again!.message.body).toBe('b');
    again!.delivery.accept();
    await r.until(() => r.settledDeliveries.length >= 3, 15_000, 'broker settlement');
    await waitCounts(t, q, { depth: 0 });
    r.link.close();
  });

  it('a pre-settled consumer (snd-settle-mode settled) removes messages as it sends them', async () => {
    const q = fresh('presettled');
    await sendAll(t.conn, q, [{ body: 'p1' }, { body: 'p2' }]);
    const r = new TestReceiver(t.conn, q, { snd_settle_mode: 1 });
    const got = await r.next(2);
    expect(got.map((g) => g.message.body)).toEqual(['p1', 'p2']);
    await waitCounts(t, q, { depth: 0 });
    r.link.close();
  });
});
