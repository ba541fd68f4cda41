/**
 * The cluster's release-owner entry (a dead member's new incarnation, or the leader noticing a
 * silent member) starts the grace period of the temporary queues whose owner link that member's
 * processes held (docs/topics.md#owner-gone); the queues of other processes are left alone.
 */
import { describe, expect, it } from 'vitest';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { type EntryBody, encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';

function machine() {
  const sm = new ClusterStateMachine();
  let index = 0;
  const entry = (body: EntryBody, leaderTime: number) =>
    sm.apply({ index: ++index, term: 1, data: encodeEntry('m0@i', index, body, leaderTime) });
  const event = (e: BrokerEvent) => entry({ kind: 'event', event: encodeEvent(e) }, e.leaderTime);
  return { sm, entry, event };
}

const temp = { temporary: { owner: 'c/l', policy: 'delete-on-close' as const } };

describe('release-owner and owner records', () => {
  it('marks the queues held by the released member as owner-lost at the entry time', () => {
    const { sm, entry, event } = machine();
    for (const q of ['$temp/a', '$temp/b', '$temp/c'])
      event({ type: 'declare', leaderTime: 1, queue: q, options: temp });
    event({ type: 'owner-attached', leaderTime: 2, queue: '$temp/a', holder: 'm1@old' });
    event({ type: 'owner-attached', leaderTime: 2, queue: '$temp/b', holder: 'm1@new' });
    event({ type: 'owner-attached', leaderTime: 2, queue: '$temp/c', holder: 'm2@x' });
    // m1 restarted as incarnation `new`: its earlier processes are gone
    entry({ kind: 'release-owner', member: 'm1', keep: 'new' }, 5);
    expect(sm.state.ownedQueues()).toEqual([
      { queue: '$temp/a', ownerLostAt: 5 },
      { queue: '$temp/b', holder: 'm1@new' },
      { queue: '$temp/c', holder: 'm2@x' },
    ]);
    // the leader noticed m2 silent
    entry({ kind: 'release-owner', member: 'm2', keep: '' }, 7);
    expect(sm.state.ownedQueues()[2]).toEqual({ queue: '$temp/c', ownerLostAt: 7 });
    // the grace period's end: a delete for that moment
    event({ type: 'delete', leaderTime: 9, queue: '$temp/c', ifOwnerLostAt: 7 });
    expect(sm.state.hasQueue('$temp/c')).toBe(false);
  });
});
