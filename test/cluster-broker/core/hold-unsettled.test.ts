import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';

const body = new Uint8Array([1, 2, 3]);

/** A queue 'q' with two messages, both acquired by consumer 'east/fed' (link identity 'fed'), which asked for a hold. */
function heldByGoneLink(ms = 1_000): BrokerState {
  const s = new BrokerState();
  const t = 1_000;
  const events: BrokerEvent[] = [
    { type: 'declare', leaderTime: t, queue: 'q', options: {} },
    { type: 'enqueue', leaderTime: t, queue: 'q', message: body },
    { type: 'enqueue', leaderTime: t, queue: 'q', message: body },
    { type: 'hold-unsettled', leaderTime: t, consumer: 'p1|fed', link: 'fed', ms },
    { type: 'acquire', leaderTime: t, queue: 'q', consumer: 'p1|fed', link: 'fed', max: 2 },
    { type: 'release-consumer', leaderTime: t + 10, consumer: 'p1|fed' },
  ];
  for (const e of events) s.apply(e);
  return s;
}

describe('hold-unsettled', () => {
  it('keeps what a gone link held from other consumers, for the same link identity only', () => {
    const s = heldByGoneLink();
    expect(s.availableSeqs('q')).toEqual([1, 2]);
    const other = s.apply({ type: 'acquire', leaderTime: 1_100, queue: 'q', consumer: 'c/local', max: 5 });
    expect(other.messages).toEqual([]);
    expect(s.reservationLapse('q', 'c/local')).toBe(2_010);
    // the same link re-attached on another process: gets them back, redelivered
    const back = s.apply({
      type: 'acquire',
      leaderTime: 1_200,
      queue: 'q',
      consumer: 'p2|fed',
      link: 'fed',
      max: 5,
    });
    expect(back.messages.map((m) => [m.seq, m.firstAcquirer])).toEqual([
      [1, false],
      [2, false],
    ]);
    expect(s.reservationLapse('q', 'c/local')).toBeUndefined();
  });

  it('lets everyone have them once the hold lapsed', () => {
    const s = heldByGoneLink();
    const early = s.apply({ type: 'acquire', leaderTime: 2_009, queue: 'q', consumer: 'c/local', max: 5 });
    expect(early.messages).toEqual([]);
    const late = s.apply({ type: 'acquire', leaderTime: 2_010, queue: 'q', consumer: 'c/local', max: 5 });
    expect(late.messages.map((m) => m.seq)).toEqual([1, 2]);
  });

  it('is cancelled by ms 0, and gone with its consumer once released', () => {
    const s = new BrokerState();
    s.apply({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    s.apply({ type: 'enqueue', leaderTime: 1, queue: 'q', message: body });
    s.apply({ type: 'hold-unsettled', leaderTime: 1, consumer: 'a', link: 'a', ms: 5_000 });
    s.apply({ type: 'hold-unsettled', leaderTime: 1, consumer: 'a', link: 'a', ms: 0 });
    s.apply({ type: 'acquire', leaderTime: 1, queue: 'q', consumer: 'a', max: 1 });
    s.apply({ type: 'release-consumer', leaderTime: 2, consumer: 'a' });
    expect(
      s.apply({ type: 'acquire', leaderTime: 3, queue: 'q', consumer: 'b', max: 1 }).messages,
    ).toHaveLength(1);
    expect(s.holds.size).toBe(0);
  });

  it('survives a snapshot and the event codec', () => {
    const s = heldByGoneLink();
    const restored = BrokerState.fromSnapshot(s.snapshot());
    expect(restored.snapshot()).toEqual(s.snapshot());
    expect(
      restored.apply({ type: 'acquire', leaderTime: 1_100, queue: 'q', consumer: 'x', max: 5 }).messages,
    ).toEqual([]);
    const e: BrokerEvent = {
      type: 'hold-unsettled',
      leaderTime: 7,
      consumer: 'p|c/l',
      link: 'c/l',
      ms: 60_000,
    };
    expect(decodeEvent(encodeEvent(e))).toEqual(e);
  });
});
