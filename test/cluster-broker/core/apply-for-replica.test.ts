import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { bytes } from './helpers.js';

const snapshotOf = (s: BrokerState): Buffer => Buffer.concat(s.snapshotParts());

/**
 * A follower applies the entries other processes proposed with applyForReplica (no message list
 * for an acquire): its state must be the one `apply` makes, event for event.
 */
describe('BrokerState.applyForReplica (docs/cluster-member.md#apply-on-followers)', () => {
  const events: BrokerEvent[] = [
    { type: 'declare', leaderTime: 1, queue: 'q', options: { deliveryLimit: 3 } },
    ...['a', 'b', 'c', 'd'].map(
      (body): BrokerEvent => ({ type: 'enqueue', leaderTime: 2, queue: 'q', message: bytes(body) }),
    ),
    { type: 'acquire', leaderTime: 3, queue: 'q', consumer: 'c/1', max: 3 },
    { type: 'settle', leaderTime: 4, consumer: 'c/1', seqs: [1], outcome: { type: 'accepted' } },
    {
      type: 'settle',
      leaderTime: 4,
      consumer: 'c/1',
      seqs: [2],
      outcome: { type: 'modified', deliveryFailed: true },
    },
    { type: 'acquire', leaderTime: 5, queue: 'q', consumer: 'c/2', seqs: [2, 4] },
    { type: 'release-consumer', leaderTime: 6, consumer: 'c/1' },
    { type: 'acquire', leaderTime: 7, queue: 'q', consumer: 'c/3', max: 10 },
  ];

  it('changes the state exactly as apply does, and lists no acquired messages', () => {
    const leader = new BrokerState();
    const follower = new BrokerState();
    let listed = 0;
    for (const e of events) {
      const whole = leader.apply(structuredClone(e));
      const quiet = follower.applyForReplica(structuredClone(e));
      if (whole.type === 'acquire' && quiet.type === 'acquire') {
        listed += whole.messages.length;
        expect(quiet.messages).toEqual([]);
      } else expect(quiet).toEqual(whole);
      expect(snapshotOf(follower).equals(snapshotOf(leader))).toBe(true);
    }
    expect(listed).toBe(6);
    expect(follower.queueInfo('q')).toEqual(leader.queueInfo('q'));
  });

  it('leaves apply listing the acquired messages afterwards', () => {
    const s = new BrokerState();
    for (const e of events.slice(0, 6)) s.applyForReplica(structuredClone(e));
    s.apply({ type: 'release-consumer', leaderTime: 8, consumer: 'c/1' });
    const r = s.apply({ type: 'acquire', leaderTime: 9, queue: 'q', consumer: 'c/4', max: 2 });
    expect(r.messages.map((m) => [m.seq, m.firstAcquirer])).toEqual([
      [1, false],
      [2, false],
    ]);
  });
});
