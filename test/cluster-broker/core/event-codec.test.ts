/**
 * A commit event's sub-events are written in place behind their length prefix
 * (VarintWriter.prefixed): the bytes must be exactly those of the plain layout (each sub-event
 * encoded on its own, then length-prefixed), also when the prefix's size guessed from the size
 * hint is too small (a settle of many seqs) or too big (an enqueue a little under 128 bytes), and
 * across the 1-, 2- and 3-byte prefix boundaries.
 */
import { describe, expect, it } from 'vitest';
import { VarintWriter } from '../../../src/cluster-broker/core/binary.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { CommitEvent, EnqueueEvent, SettleEvent } from '../../../src/cluster-broker/core/events.js';

const enqueue = (bodyBytes: number): EnqueueEvent => ({
  type: 'enqueue',
  leaderTime: 0,
  queue: 'q',
  message: new Uint8Array(bodyBytes).fill(7),
});
const settle = (seqs: number): SettleEvent => ({
  type: 'settle',
  leaderTime: 0,
  consumer: 'c/l',
  seqs: Array.from({ length: seqs }, (_, i) => 1000 + i),
  outcome: { type: 'accepted' },
});

/** The layout as written before: the commit's head, the count, each sub-event's own encoding length-prefixed. */
function plainLayout(e: CommitEvent): Uint8Array {
  const head = encodeEvent({ type: 'commit', leaderTime: e.leaderTime, events: [] });
  const w = new VarintWriter();
  w.raw(head.subarray(0, head.length - 1)); // drop the count 0
  w.uint(e.events.length);
  for (const sub of e.events) w.bytes(encodeEvent(sub));
  return w.finish();
}

describe('commit event layout', () => {
  const cases: Array<[string, Array<EnqueueEvent | SettleEvent>]> = [
    ['empty', []],
    ['small enqueues', [enqueue(10), enqueue(20)]],
    ['prefix guessed too big (enqueue just under 128 bytes)', [enqueue(100), enqueue(110)]],
    ['prefix guessed too small (settles of many seqs)', [settle(100), settle(3000)]],
    ['1/2-byte boundary', [enqueue(110), enqueue(111), enqueue(112), enqueue(113), enqueue(114)]],
    ['2/3-byte boundary', [enqueue(16_360), enqueue(16_370), enqueue(16_380), enqueue(16_390)]],
    ['a mix, large', [enqueue(70_000), settle(1), enqueue(0), settle(200)]],
  ];
  for (const [name, events] of cases) {
    it(`${name}: the plain layout's bytes, and it decodes back`, () => {
      const e: CommitEvent = { type: 'commit', leaderTime: 1234.5, events };
      const bytes = encodeEvent(e);
      expect(Buffer.from(bytes).equals(Buffer.from(plainLayout(e)))).toBe(true);
      expect(decodeEvent(bytes)).toEqual(e);
    });
  }

  it('a commit written after other bytes in a writer near its end keeps what precedes it', () => {
    // a writer whose buffer is nearly full, so the prefix and the sub-events make it regrow
    const w = new VarintWriter(64);
    w.raw(new Uint8Array(60).fill(9));
    const e: CommitEvent = { type: 'commit', leaderTime: 1, events: [settle(500), enqueue(300)] };
    w.prefixed(1, () => w.raw(encodeEvent(e)));
    const out = w.finish();
    expect(Buffer.from(out.subarray(0, 60)).equals(Buffer.alloc(60, 9))).toBe(true);
    const expected = new VarintWriter();
    expected.bytes(encodeEvent(e));
    expect(Buffer.from(out.subarray(60)).equals(Buffer.from(expected.finish()))).toBe(true);
  });
});
