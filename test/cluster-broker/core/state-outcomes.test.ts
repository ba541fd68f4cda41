import { describe, expect, it } from 'vitest';
import { Driver, text } from './helpers.js';

describe('BrokerState: settle outcomes (docs/delivery-contract.md#outcomes)', () => {
  it('accepted removes the message for good', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const seq = d.take('q', 'c/1');
    expect(d.settle('c/1', [seq], { type: 'accepted' })).toEqual({
      type: 'settle',
      settled: [seq],
      stale: [],
      deadLettered: [],
    });
    expect(d.state.queueInfo('q')).toMatchObject({ depth: 0, available: 0, acquired: 0, bytes: 0 });
    expect(d.acquire('q', 'c/2').messages).toEqual([]);
    expect(d.state.acquiredBy('c/1')).toEqual([]);
  });

  it('released makes it available again with delivery-count unchanged, at its FIFO position', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a', { deliveryCount: 2 });
    d.enqueue('q', 'b');
    const first = d.acquire('q', 'c/1').messages[0];
    expect(first).toMatchObject({ deliveryCount: 2, firstAcquirer: true });
    expect(text(first.message)).toBe('a');
    d.settle('c/1', [first.seq], { type: 'released' });
    expect(d.bodies('q')).toEqual(['a', 'b']);
    const again = d.acquire('q', 'c/2').messages[0];
    expect(again.seq).toBe(first.seq);
    expect(again.deliveryCount).toBe(2);
    // It was acquired by a link before, so first-acquirer is false (spec 3.2.1).
    expect(again.firstAcquirer).toBe(false);
  });

  it('modified{deliveryFailed} adds one to delivery-count and clears first-acquirer', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const m1 = d.acquire('q', 'c/1').messages[0];
    expect(m1).toMatchObject({ deliveryCount: 0, firstAcquirer: true });
    d.settle('c/1', [m1.seq], { type: 'modified', deliveryFailed: true });
    const m2 = d.acquire('q', 'c/1').messages[0];
    expect(m2).toMatchObject({ seq: m1.seq, deliveryCount: 1, firstAcquirer: false });
    d.settle('c/1', [m2.seq], { type: 'modified', deliveryFailed: true });
    expect(d.acquire('q', 'c/1').messages[0].deliveryCount).toBe(2);
  });

  it('modified without deliveryFailed leaves delivery-count unchanged', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const s = d.take('q', 'c/1');
    d.settle('c/1', [s], { type: 'modified' });
    expect(d.acquire('q', 'c/1').messages[0].deliveryCount).toBe(0);
  });

  it('modified{undeliverableHere} never offers it to that link again, but to others', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    d.enqueue('q', 'b');
    const s = d.take('q', 'c/1');
    d.settle('c/1', [s], { type: 'modified', undeliverableHere: true });
    // c/1 skips 'a' and gets 'b'
    const next = d.acquire('q', 'c/1', 10).messages;
    expect(next.map((m) => text(m.message))).toEqual(['b']);
    expect(d.acquire('q', 'c/1', 10).messages).toEqual([]);
    // releasing back does not make it deliverable to c/1 either
    d.settle('c/1', [next[0].seq], { type: 'released' });
    expect(d.acquire('q', 'c/1', 10).messages.map((m) => text(m.message))).toEqual(['b']);
    // another link gets it, delivery-count unchanged (deliveryFailed not set)
    const other = d.acquire('q', 'c/2').messages[0];
    expect(text(other.message)).toBe('a');
    expect(other.deliveryCount).toBe(0);
  });

  it('undeliverable-here marks the link identity, which survives a new attachment of the same link', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const acq = (consumer: string) =>
      d.state.apply({ type: 'acquire', leaderTime: d.time, queue: 'q', consumer, link: 'cont/L' });
    const first = acq('cont/L#1').messages[0];
    d.state.apply({
      type: 'settle',
      leaderTime: d.time,
      consumer: 'cont/L#1',
      link: 'cont/L',
      seqs: [first.seq],
      outcome: { type: 'modified', undeliverableHere: true },
    });
    expect(acq('cont/L#2').messages).toEqual([]);
    expect(d.acquire('q', 'cont/other').messages).toHaveLength(1);
  });

  it('modified{deliveryFailed, undeliverableHere} does both', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const s = d.take('q', 'c/1');
    d.settle('c/1', [s], { type: 'modified', deliveryFailed: true, undeliverableHere: true });
    expect(d.acquire('q', 'c/1').messages).toEqual([]);
    expect(d.acquire('q', 'c/2').messages[0].deliveryCount).toBe(1);
  });

  it('rejected dead-letters to <queue>.dlq with the error, bytes unchanged', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'poison');
    const s = d.take('q', 'c/1');
    const r = d.settle('c/1', [s], { type: 'rejected', error: { condition: 'app:bad', description: 'no' } });
    expect(r.deadLettered).toEqual([{ seq: s, queue: 'q.dlq', newSeq: expect.any(Number) }]);
    expect(d.state.queueInfo('q')?.depth).toBe(0);
    expect(d.state.queueInfo('q.dlq')?.depth).toBe(1);
    const dl = d.acquire('q.dlq', 'dlq-reader/1').messages[0];
    expect(text(dl.message)).toBe('poison');
    expect(dl.deadLetter).toEqual({ fromQueue: 'q', error: { condition: 'app:bad', description: 'no' } });
    // A DLQ has no DLQ of its own: rejecting there drops the message.
    const r2 = d.settle('dlq-reader/1', [dl.seq], { type: 'rejected' });
    expect(r2.deadLettered).toEqual([]);
    expect(d.state.queueInfo('q.dlq')?.depth).toBe(0);
    expect(d.state.hasQueue('q.dlq.dlq')).toBe(false);
  });

  it('rejected with a custom DLQ, or dropped with deadLetterQueue null', () => {
    const d = new Driver();
    d.declare('a', { deadLetterQueue: 'graveyard' });
    d.declare('b', { deadLetterQueue: null });
    d.enqueue('a', 'x');
    d.enqueue('b', 'y');
    d.settle('c/1', [d.take('a', 'c/1')], { type: 'rejected' });
    d.settle('c/1', [d.take('b', 'c/1')], { type: 'rejected' });
    expect(d.bodies('graveyard')).toEqual(['x']);
    expect(d.state.hasQueue('b.dlq')).toBe(false);
    expect(d.state.queueInfo('b')?.depth).toBe(0);
  });

  it('settling a message the consumer does not hold is stale and changes nothing', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    const s = d.take('q', 'c/1');
    expect(d.settle('c/2', [s], { type: 'accepted' })).toMatchObject({ settled: [], stale: [s] });
    d.releaseConsumer('c/1');
    expect(d.settle('c/1', [s], { type: 'accepted' })).toMatchObject({ settled: [], stale: [s] });
    expect(d.state.queueInfo('q')).toMatchObject({ depth: 1, available: 1 });
    expect(d.settle('c/1', [999], { type: 'accepted' }).stale).toEqual([999]);
  });

  it('one settle event covers a range of deliveries', () => {
    const d = new Driver();
    d.declare('q');
    for (const b of ['a', 'b', 'c']) d.enqueue('q', b);
    const seqs = d.acquire('q', 'c/1', 3).messages.map((m) => m.seq);
    expect(d.settle('c/1', seqs, { type: 'accepted' }).settled).toEqual(seqs);
    expect(d.state.queueInfo('q')?.depth).toBe(0);
  });
});

describe('BrokerState: acquisition', () => {
  it('is FIFO across competing consumers; each message has one owner', () => {
    const d = new Driver();
    d.declare('q');
    for (let i = 0; i < 10; i++) d.enqueue('q', `m${i}`);
    const got: Record<string, string[]> = { 'a/1': [], 'b/1': [] };
    for (let i = 0; i < 5; i++) {
      for (const c of ['a/1', 'b/1']) got[c].push(text(d.acquire('q', c).messages[0].message));
    }
    expect(got['a/1']).toEqual(['m0', 'm2', 'm4', 'm6', 'm8']);
    expect(got['b/1']).toEqual(['m1', 'm3', 'm5', 'm7', 'm9']);
    expect(d.acquire('q', 'a/1').messages).toEqual([]);
    expect(d.state.queueInfo('q')).toMatchObject({ depth: 10, available: 0, acquired: 10 });
    expect(d.state.acquiredBy('a/1')).toHaveLength(5);
  });

  it('acquire with max takes up to max in order; an empty queue or unknown queue gives none', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'a');
    d.enqueue('q', 'b');
    expect(d.acquire('q', 'c/1', 5).messages.map((m) => text(m.message))).toEqual(['a', 'b']);
    expect(d.acquire('q', 'c/1', 5).messages).toEqual([]);
    expect(d.acquire('nope', 'c/1').messages).toEqual([]);
  });

  it('release-consumer returns its messages, delivery-count + 1, in FIFO order', () => {
    const d = new Driver();
    d.declare('q');
    for (const b of ['a', 'b', 'c', 'd']) d.enqueue('q', b);
    const a = d.acquire('q', 'x/1', 2).messages; // a, b
    d.acquire('q', 'y/1'); // c
    expect(d.releaseConsumer('x/1')).toEqual({ type: 'release-consumer', released: a.map((m) => m.seq) });
    expect(d.bodies('q')).toEqual(['a', 'b', 'd']);
    // a lost link is a failed delivery (docs/broker-features.md#delivery-limit)
    expect(d.acquire('q', 'z/1').messages[0]).toMatchObject({ deliveryCount: 1, firstAcquirer: false });
    expect(d.state.listConsumers().sort()).toEqual(['y/1', 'z/1']);
    const all = d.state.apply({ type: 'release-all', leaderTime: d.time });
    expect(all.released).toHaveLength(2);
    expect(d.state.listConsumers()).toEqual([]);
  });
});

describe('BrokerState: TTL by leader time', () => {
  it('expire drops available messages whose deadline passed, by event time only', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'short', { expiresAt: 2_000 });
    d.enqueue('q', 'long', { expiresAt: 5_000 });
    d.enqueue('q', 'forever');
    expect(d.state.nextExpiryAt()).toBe(2_000);
    d.time = 1_999;
    expect(d.expire().expired).toEqual([]);
    d.time = 2_000;
    expect(d.expire().expired).toEqual([1]);
    expect(d.bodies('q')).toEqual(['long', 'forever']);
    expect(d.state.nextExpiryAt()).toBe(5_000);
    d.time = 10_000;
    expect(d.expire().expired).toEqual([2]);
    expect(d.bodies('q')).toEqual(['forever']);
    expect(d.state.nextExpiryAt()).toBeUndefined();
  });

  it('time never goes backwards (a new leader with a slow clock)', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'x', { expiresAt: 2_000 });
    d.time = 3_000;
    d.expire();
    d.time = 1_500; // behind
    d.enqueue('q', 'y', { expiresAt: 2_500 });
    d.expire();
    expect(d.state.now).toBe(3_000);
    expect(d.bodies('q')).toEqual([]);
  });

  it('acquire skips and drops expired messages; an acquired one that expired is dropped when released', () => {
    const d = new Driver();
    d.declare('q');
    d.enqueue('q', 'old', { expiresAt: 1_500 });
    d.enqueue('q', 'held', { expiresAt: 3_000 });
    d.enqueue('q', 'fresh');
    d.time = 2_000;
    const got = d.acquire('q', 'c/1').messages;
    expect(got.map((m) => text(m.message))).toEqual(['held']);
    expect(d.state.queueInfo('q')?.depth).toBe(2);
    d.time = 4_000;
    expect(d.expire().expired).toEqual([]); // acquired: not expired under its consumer
    expect(d.settle('c/1', [got[0].seq], { type: 'released' }).settled).toEqual([got[0].seq]);
    expect(d.bodies('q')).toEqual(['fresh']);
    expect(d.state.queueInfo('q')?.depth).toBe(1);
  });
});

describe('BrokerState: expiry bookkeeping', () => {
  it('does not accumulate expiry entries of consumed long-TTL messages', () => {
    const d = new Driver();
    d.declare('q');
    for (let i = 0; i < 5_000; i++) {
      d.enqueue('q', `m${i}`, { expiresAt: 10_000_000 });
      d.settle('c/1', [d.take('q', 'c/1')], { type: 'accepted' });
    }
    d.enqueue('q', 'last', { expiresAt: 10_000_000 });
    expect(d.state.expiry.size).toBeLessThan(2_100);
    d.time = 10_000_000;
    expect(d.expire().expired).toHaveLength(1);
  });
});

describe('BrokerState: dedup at apply time (docs/delivery-contract.md#dedup-at-apply)', () => {
  it('the first to apply is enqueued, a re-send with the same key is a duplicate', () => {
    const d = new Driver();
    d.declare('q');
    // original (uncommitted when the client re-sent) and the re-send both reach the log
    expect(d.enqueue('q', 'v1', { dedupKey: 'string:abc' })).toMatchObject({ status: 'enqueued' });
    expect(d.enqueue('q', 'v1', { dedupKey: 'string:abc' })).toEqual({
      type: 'enqueue',
      status: 'duplicate',
    });
    expect(d.bodies('q')).toEqual(['v1']);
    // even after the message was consumed
    d.settle('c/1', [d.take('q', 'c/1')], { type: 'accepted' });
    expect(d.enqueue('q', 'v1', { dedupKey: 'string:abc' }).status).toBe('duplicate');
    // keys are per queue and typed by the proposer
    d.declare('other');
    expect(d.enqueue('other', 'v1', { dedupKey: 'string:abc' }).status).toBe('enqueued');
    expect(d.enqueue('q', 'v1', { dedupKey: 'ulong:abc' }).status).toBe('enqueued');
    // no message-id: never deduplicated
    expect(d.enqueue('q', 'same').status).toBe('enqueued');
    expect(d.enqueue('q', 'same').status).toBe('enqueued');
  });

  it('entries expire by age in leader time', () => {
    const d = new Driver();
    d.declare('q', { dedupWindowMs: 1_000 });
    d.enqueue('q', 'a', { dedupKey: 'k' });
    d.time += 999;
    expect(d.enqueue('q', 'a', { dedupKey: 'k' }).status).toBe('duplicate');
    d.time += 1;
    expect(d.enqueue('q', 'a', { dedupKey: 'k' }).status).toBe('enqueued');
    // an expire event also forgets aged entries
    d.time += 5_000;
    d.expire();
    expect(d.state.queues.get('q')?.dedup.size).toBe(0);
  });

  it('entries expire by count (oldest first)', () => {
    const d = new Driver();
    d.declare('q', { dedupWindowCount: 3 });
    for (const k of ['k1', 'k2', 'k3', 'k4']) d.enqueue('q', k, { dedupKey: k });
    expect(d.enqueue('q', 'x', { dedupKey: 'k1' }).status).toBe('enqueued'); // k1 forgotten
    expect(d.enqueue('q', 'x', { dedupKey: 'k3' }).status).toBe('duplicate');
    expect(d.enqueue('q', 'x', { dedupKey: 'k4' }).status).toBe('duplicate');
  });

  it('a large window forgets exactly the oldest beyond its count', () => {
    const d = new Driver();
    d.declare('q', { dedupWindowCount: 10_000 });
    for (let i = 0; i < 25_000; i++) d.enqueue('q', 'x', { dedupKey: `k${i}` });
    expect(d.state.queues.get('q')?.dedup.size).toBe(10_000);
    expect(d.enqueue('q', 'x', { dedupKey: 'k15000' }).status).toBe('duplicate');
    expect(d.enqueue('q', 'x', { dedupKey: 'k24999' }).status).toBe('duplicate');
    expect(d.enqueue('q', 'x', { dedupKey: 'k14999' }).status).toBe('enqueued');
  });

  it('dedupWindowCount 0 disables dedup', () => {
    const d = new Driver();
    d.declare('q', { dedupWindowCount: 0 });
    d.enqueue('q', 'a', { dedupKey: 'k' });
    expect(d.enqueue('q', 'a', { dedupKey: 'k' }).status).toBe('enqueued');
  });

  it('a duplicate is answered even when the queue is full', () => {
    const d = new Driver();
    d.declare('q', { maxMessages: 1 });
    d.enqueue('q', 'a', { dedupKey: 'k' });
    expect(d.enqueue('q', 'a', { dedupKey: 'k' }).status).toBe('duplicate');
  });
});

describe('BrokerState: limits and queue lifecycle', () => {
  it('refuses beyond maxMessages and maxBytes with amqp:resource-limit-exceeded, and a refused id is not remembered', () => {
    const d = new Driver();
    d.declare('m', { maxMessages: 2 });
    d.declare('b', { maxBytes: 5 });
    expect(d.enqueue('m', 'a').status).toBe('enqueued');
    expect(d.enqueue('m', 'b').status).toBe('enqueued');
    expect(d.enqueue('m', 'c', { dedupKey: 'kc' })).toMatchObject({
      status: 'refused',
      condition: 'amqp:resource-limit-exceeded',
    });
    // acquired messages still count
    d.take('m', 'c/1');
    expect(d.enqueue('m', 'c').status).toBe('refused');
    d.settle('c/1', d.state.acquiredBy('c/1'), { type: 'accepted' });
    expect(d.enqueue('m', 'c', { dedupKey: 'kc' }).status).toBe('enqueued');
    expect(d.enqueue('b', 'abc').status).toBe('enqueued');
    expect(d.enqueue('b', 'abc').status).toBe('refused');
    expect(d.enqueue('b', 'ab').status).toBe('enqueued');
    expect(d.state.queueInfo('b')?.bytes).toBe(5);
  });

  it('enqueue to an unknown queue is refused with amqp:not-found', () => {
    const d = new Driver();
    expect(d.enqueue('nope', 'a')).toMatchObject({ status: 'refused', condition: 'amqp:not-found' });
  });

  it('declare is idempotent (first options win); delete drops everything, acquisitions included', () => {
    const d = new Driver();
    expect(d.declare('q', { maxMessages: 1 })).toEqual({ type: 'declare', created: true });
    expect(d.declare('q', { maxMessages: 100 })).toEqual({ type: 'declare', created: false });
    expect(d.state.queueInfo('q')?.options).toEqual({ maxMessages: 1 });
    d.enqueue('q', 'a');
    const s = d.take('q', 'c/1');
    expect(d.state.apply({ type: 'delete', leaderTime: d.time, queue: 'q' })).toEqual({
      type: 'delete',
      deleted: true,
      dropped: 1,
    });
    expect(d.state.acquiredBy('c/1')).toEqual([]);
    expect(d.settle('c/1', [s], { type: 'accepted' }).stale).toEqual([s]);
    expect(d.state.listQueues()).toEqual([]);
    expect(d.state.apply({ type: 'delete', leaderTime: d.time, queue: 'q' }).deleted).toBe(false);
  });

  it('keeps a view into a larger buffer as its own copy (never pins a socket chunk)', () => {
    const d = new Driver();
    d.declare('q');
    const chunk = new Uint8Array(65536).fill(7);
    d.state.apply({ type: 'enqueue', leaderTime: d.time, queue: 'q', message: chunk.subarray(100, 110) });
    chunk.fill(9); // the socket buffer is reused for the next read
    const m = d.acquire('q', 'c/1').messages[0].message;
    expect(m.length).toBe(10);
    expect([...m]).toEqual(new Array(10).fill(7));
    expect(m.buffer).not.toBe(chunk.buffer);
  });
});
