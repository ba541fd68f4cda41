import { describe, expect, it } from 'vitest';
import type { Message, UnsafeFlags } from '../../../src/cluster-broker/replication/raft/types.js';
import { Cluster, data } from './lockstep-cluster.js';
import { wipe } from './lockstep-losses.js';

/**
 * Issue 30's seed 10304, in lock step: n2 never hears from the cluster (its log stays empty, its
 * term 0); the leader and the other member commit entries; the other goes down; the leader's
 * data dir is emptied and it comes back with n2 only.
 */
function emptiedLeaderWithEmptyPeer(unsafe: UnsafeFlags = {}) {
  const c = new Cluster(['n1', 'n2', 'n3'], { unsafe });
  c.isolate('n2');
  c.run(1000);
  const leader = c.leader();
  const other = leader === 'n1' ? 'n3' : 'n1';
  for (let i = 0; i < 3; i++) c.core(leader).propose(data(`v${i}`), c.now);
  c.run(300);
  const committed = c.core(leader).commitIndex;
  expect(c.core(other).commitIndex).toBe(committed);
  expect(c.core('n2').log.lastIndex()).toBe(0);
  wipe(c, leader);
  c.partition([[leader, 'n2'], [other]]);
  c.run(3000);
  return { c, leader, other, committed };
}

describe('a member that lost its whole store (blank)', () => {
  it('neither votes nor stands: with the only other intact member down, the cluster waits', () => {
    const { c, leader } = emptiedLeaderWithEmptyPeer();
    expect(c.leaders()).toEqual([]);
    expect(c.core(leader).recoveringReason).toBe('blank');
    expect(c.core(leader).votedFor).toBeNull();
  });

  it('is caught: with the old rule (blank votes for empty logs) a leader without the committed entries wins', () => {
    const { c, committed } = emptiedLeaderWithEmptyPeer({ bootstrapOnBlankMajority: true });
    const leaders = c.leaders();
    expect(leaders).toHaveLength(1);
    expect(c.core(leaders[0]!).log.lastIndex()).toBeLessThan(committed);
  });

  it('once the member with the entries is back, a leader elected without it catches it up, and then it votes', () => {
    const { c, leader, committed } = emptiedLeaderWithEmptyPeer();
    c.heal();
    c.run(2000);
    const l = c.leader();
    expect(l).not.toBe(leader);
    c.core(l).propose(data('after'), c.now);
    c.run(500);
    expect(c.conflicts()).toEqual([]);
    expect(c.core(leader).recoveringReason).toBeNull();
    expect(c.core(leader).commitIndex).toBeGreaterThan(committed);
    expect(c.applied.get(leader)!.filter((e) => e.data !== null)).toHaveLength(4);
  });

  it('a new cluster forms only once every member has started (all blank), then elects at once', () => {
    const c = new Cluster(['a', 'b', 'c']);
    for (const id of c.ids) wipe(c, id);
    c.isolate('c');
    c.run(2000);
    expect(c.leaders()).toEqual([]);
    expect(c.core('a').recoveringReason).toBe('blank');
    c.heal();
    c.run(1500);
    const l = c.leader();
    c.core(l).propose(data('first'), c.now);
    c.run(500);
    for (const id of c.ids) {
      expect(c.core(id).recoveringReason, id).toBeNull();
      expect(c.core(id).commitIndex, id).toBe(c.core(l).commitIndex);
    }
  });

  /**
   * Simulation seed 357,612,612: blank claims every member sent at the cluster's first start,
   * delivered again long after, to a member whose data dir was emptied while the entries it held
   * were on only one other member. Only answers to its current round of requests may count.
   */
  function staleClaimsAfterAWipe(unsafe: UnsafeFlags = {}) {
    const c = new Cluster(['n1', 'n2', 'n3'], { unsafe });
    const claims: Message[] = [];
    c.intercept = (m) => {
      if ((m.type === 'vote' || m.type === 'vote-response') && m.blank && m.from !== 'n2') claims.push(m);
      return m;
    };
    for (const id of c.ids) wipe(c, id);
    c.run(1500);
    const l = c.leader();
    for (let i = 0; i < 3; i++) c.core(l).propose(data(`v${i}`), c.now);
    c.run(300);
    expect(claims.length).toBeGreaterThan(0);
    c.intercept = (m) => m;
    wipe(c, 'n2');
    c.isolate('n2');
    for (const m of claims) c.core('n2').step({ ...m, to: 'n2' }, c.now);
    c.run(2000);
    return c;
  }

  it('counts only answers to its current round: claims sent long ago do not end its recovery', () => {
    const c = staleClaimsAfterAWipe();
    expect(c.core('n2').recoveringReason).toBe('blank');
    expect(c.core('n2').votedFor).toBeNull();
  });

  it('is caught: with the old count (any blank claim ever received) the emptied member ends its recovery', () => {
    const c = staleClaimsAfterAWipe({ countStaleBlankClaims: true });
    expect(c.core('n2').recoveringReason).toBeNull();
  });
});
