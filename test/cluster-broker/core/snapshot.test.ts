import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { anyEvent, eventSequence } from './arbitraries.js';
import { Driver } from './helpers.js';

/**
 * Random seqs rarely name a held message; read a settle's seqs as picks among what its consumer
 * holds right now (seq 40 stays a raw, probably stale, seq). The resolved event goes to both states.
 */
function resolve(e: BrokerEvent, s: BrokerState): BrokerEvent {
  if (e.type !== 'settle') return e;
  const held = s.acquiredBy(e.consumer);
  const seqs = e.seqs.map((i) => (i === 40 || held.length === 0 ? i : held[i % held.length]));
  return { ...e, seqs: [...new Set(seqs)] };
}

function checkInvariants(s: BrokerState): void {
  let acquiredTotal = 0;
  for (const q of s.listQueues()) {
    expect(q.depth).toBe(q.available + q.acquired);
    expect(q.available).toBe(s.availableSeqs(q.name).length);
    const seqs = s.availableSeqs(q.name);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs); // FIFO order is seq order
    acquiredTotal += q.acquired;
  }
  const held = s.listConsumers().reduce((n, c) => n + s.acquiredBy(c).length, 0);
  expect(held).toBe(acquiredTotal);
}

describe('BrokerState snapshot/restore', () => {
  it('restored mid-way, a state continues exactly like the original (random event sequences)', () => {
    // Coverage: the random sequences must actually reach the interesting paths.
    const seen = {
      settled: 0,
      deadLettered: 0,
      expired: 0,
      duplicate: 0,
      refused: 0,
      acquired: 0,
      released: 0,
    };
    const count = (r: ReturnType<BrokerState['apply']>) => {
      if (r.type === 'settle') {
        seen.settled += r.settled.length;
        seen.deadLettered += r.deadLettered.length;
      } else if (r.type === 'expire') seen.expired += r.expired.length;
      else if (r.type === 'enqueue' && r.status === 'duplicate') seen.duplicate++;
      else if (r.type === 'enqueue' && r.status === 'refused') seen.refused++;
      else if (r.type === 'acquire') seen.acquired += r.messages.length;
      else if (r.type === 'release-consumer' || r.type === 'release-all') seen.released += r.released.length;
    };
    fc.assert(
      fc.property(eventSequence, fc.nat(), (events, cut) => {
        const split = cut % (events.length + 1);
        const a = new BrokerState();
        for (const e of events.slice(0, split)) count(a.apply(resolve(e, a)));
        const snap = a.snapshot();
        const b = BrokerState.fromSnapshot(snap);
        expect(b.snapshot()).toEqual(snap);
        for (const raw of events.slice(split)) {
          const e = resolve(raw, a);
          // b gets the event through the log codec, as a recovering member would
          const ra = a.apply(e);
          count(ra);
          const rb = b.apply(decodeEvent(encodeEvent(e)));
          expect(rb).toEqual(ra);
        }
        expect(b.snapshot()).toEqual(a.snapshot());
        checkInvariants(a);
        checkInvariants(b);
      }),
      { numRuns: 300 },
    );
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(0);
  });

  it('two states that applied the same events have identical snapshots', () => {
    fc.assert(
      fc.property(eventSequence, (events: BrokerEvent[]) => {
        const a = new BrokerState();
        const b = new BrokerState();
        for (const e of events) a.apply(e);
        for (const e of events) b.apply(decodeEvent(encodeEvent(e)));
        expect(b.snapshot()).toEqual(a.snapshot());
      }),
      { numRuns: 100 },
    );
  });

  it('the parts snapshot is the same bytes, referencing long messages, and stays so as the state moves on', () => {
    const join = (parts: Uint8Array[]) => Buffer.concat(parts);
    const d = new Driver();
    d.declare('q');
    d.declare('t', { topic: true });
    for (const sub of ['s1', 's2']) d.declare(sub, { subscription: { topic: 't' } });
    const bodies = ['short', 'm'.repeat(300), 'l'.repeat(5_000), 'é'.repeat(200), ''];
    for (const b of bodies) d.enqueue('q', b, { dedupKey: `k-${b.length}` });
    d.enqueue('t', 'p'.repeat(1_000)); // one copy shared by both subscriptions
    d.take('q', 'c1');
    // copied in (under 256 bytes) and referenced: the parts writer outgrows its buffers
    for (let i = 0; i < 2_000; i++) d.enqueue('q', `${i}`.padStart(i % 2 === 0 ? 100 : 400, '-'));
    const whole = d.state.snapshot();
    const parts = d.state.snapshotParts();
    expect(join(parts)).toEqual(Buffer.from(whole));
    // long message bytes are views of the stored bytes, not copies
    const stored = d.state.queues.get('q')!.available.head!; // 'short' is acquired: the 300 m's
    expect(stored.bytes.length).toBe(300);
    expect(
      parts.some((p) => p.buffer === stored.bytes.buffer && p.byteOffset === stored.bytes.byteOffset),
    ).toBe(true);
    // consume and publish: the parts taken before still hold the snapshot of that moment
    const acquired = d.acquire('q', 'c2', 5_000).messages;
    expect(acquired.length).toBeGreaterThan(2_000);
    d.settle(
      'c2',
      acquired.map((m) => m.seq),
      { type: 'accepted' },
    );
    expect(d.state.queueInfo('q')).toMatchObject({ depth: 1 });
    for (let i = 0; i < 100; i++) d.enqueue('q', 'after'.repeat(100));
    expect(join(parts)).toEqual(Buffer.from(whole));
    expect(BrokerState.fromSnapshot(join(parts)).snapshot()).toEqual(whole);
  });

  it('rejects bytes that are not a snapshot', () => {
    expect(() => BrokerState.fromSnapshot(new Uint8Array([1, 2, 3, 4, 5]))).toThrow();
  });
});

describe('event codec', () => {
  it('round-trips every event shape', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        const bytes = encodeEvent(e);
        expect(bytes[0]).toBe(1); // version byte
        expect(decodeEvent(bytes)).toEqual(e.type === 'acquire' ? { max: 1, ...e } : e);
      }),
      { numRuns: 500 },
    );
  });

  it('stores message bytes raw (no base64/JSON inflation) and decodes to an owned copy', () => {
    const message = new Uint8Array(10_000).fill(0xab);
    const bytes = encodeEvent({ type: 'enqueue', leaderTime: 5, queue: 'q', message, dedupKey: 'string:x' });
    expect(bytes.length).toBeLessThan(10_040);
    const big = new Uint8Array(bytes.length + 100);
    big.set(bytes, 50);
    const e = decodeEvent(big.subarray(50, 50 + bytes.length));
    if (e.type !== 'enqueue') throw new Error('wrong type');
    expect(e.message).toEqual(message);
    expect(e.message.buffer.byteLength).toBe(10_000);
  });

  it('rejects unknown versions, unknown types, truncation and trailing bytes', () => {
    const ok = encodeEvent({ type: 'release-consumer', leaderTime: 1, consumer: 'q' });
    expect(() => decodeEvent(Uint8Array.from([2, ...ok.subarray(1)]))).toThrow(/version/);
    expect(() => decodeEvent(Uint8Array.from([1, 99, ...ok.subarray(2)]))).toThrow(/type/);
    expect(() => decodeEvent(ok.subarray(0, ok.length - 1))).toThrow();
    expect(() => decodeEvent(Uint8Array.from([...ok, 0]))).toThrow(/trailing/);
    // bad UTF-8 in the consumer key: a decode error carrying its AMQP condition
    const bad = Uint8Array.from([...ok.subarray(0, 10), 1, 0xff]);
    expect(() => decodeEvent(bad)).toThrow(expect.objectContaining({ condition: 'amqp:decode-error' }));
  });

  it('encodes non-ASCII queue names and dedup keys', () => {
    const e: BrokerEvent = {
      type: 'enqueue',
      leaderTime: 1,
      queue: 'qü€😀',
      message: new Uint8Array([1]),
      dedupKey: 'ключ',
    };
    expect(decodeEvent(encodeEvent(e))).toEqual(e);
  });
});
