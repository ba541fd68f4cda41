/**
 * RaftCore.nextDeadline: a driver that ticks a core only at its next deadline misses nothing a
 * fixed tick would see (docs/cluster-member.md#raft-timer): elections, heartbeats, a leader's
 * step-down once its majority is silent, and the moment isQuorate turns false.
 */
import { describe, expect, it } from 'vitest';
import { RaftCore } from '../../../src/cluster-broker/replication/raft/core.js';
import { Cluster } from './lockstep-cluster.js';

/** Advance to the earliest deadline of any core (1 ms past it), tick the cores due, settle. */
function runByDeadlines(c: Cluster, ms: number): number {
  const end = c.now + ms;
  let ticks = 0;
  while (c.now < end) {
    const next = Math.min(...c.ids.map((id) => c.core(id).nextDeadline(c.now)));
    c.now = Math.min(end, Math.max(c.now + 1, Math.ceil(next) + 1));
    for (const id of c.ids) {
      const core = c.core(id);
      if (c.now >= core.nextDeadline(c.now)) {
        core.tick(c.now);
        ticks++;
      }
    }
    c.settle();
  }
  return ticks;
}

describe('RaftCore.nextDeadline', () => {
  it('drives elections and failover alone, with a tick per deadline instead of every 5 ms', () => {
    const c = new Cluster(['a', 'b', 'c']);
    const ticks = runByDeadlines(c, 1000);
    const old = c.leader();
    // a leader's heartbeats (50 ms) and the rare expired election deadline: not 3 x 200 ticks
    expect(ticks).toBeLessThan(80);
    c.isolate(old);
    runByDeadlines(c, 1000);
    const leaders = c.leaders();
    expect(leaders).toHaveLength(1);
    expect(leaders[0]).not.toBe(old);
  });

  it('a leader that hears no follower wakes when its majority lapses, steps down, and isQuorate is false from then on', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const core = c.core(l);
    c.isolate(l);
    const heardAt = c.now; // the last round of answers came in this settle
    for (let i = 0; i < 100 && core.isLeader(); i++) {
      const next = core.nextDeadline(c.now);
      expect(next).toBeLessThanOrEqual(heardAt + 300); // max election timeout (default 300)
      // nothing changes before the deadline
      expect(core.isQuorate(Math.max(c.now, next - 1))).toBe(true);
      c.now = Math.ceil(next) + 1;
      core.tick(c.now);
      c.settle();
    }
    expect(core.isLeader()).toBe(false);
    expect(core.isQuorate(c.now)).toBe(false);
    expect(c.now).toBeLessThanOrEqual(heardAt + 300 + 2);
  });

  it('five members: the leader wakes when its second-newest answer lapses, not before or after', () => {
    // a max election timeout off the heartbeat grid (50 ms), so a lapse is never a heartbeat's time
    const c = new Cluster(['a', 'b', 'c', 'd', 'e'], { electionTimeoutMin: 167, electionTimeoutMax: 333 });
    c.run(1000);
    const l = c.leader();
    const [f1, f2, f3, f4] = c.ids.filter((id) => id !== l) as [string, string, string, string];
    const core = c.core(l);
    // the leader stops hearing f1, then f2, then f3, 100 ms apart; f4 answers throughout, so a
    // majority (itself, f4 and one more) lapses with f3's last answer, the second-newest
    c.partition([[l, f2, f3, f4], [f1]]);
    c.run(100);
    c.partition([[l, f3, f4], [f1], [f2]]);
    c.run(100);
    c.partition([[l, f4], [f1], [f2], [f3]]);
    const cutAt = c.now;
    for (let i = 0; i < 100 && core.isLeader(); i++) {
      const next = core.nextDeadline(c.now);
      // nothing changes before the deadline: it is never later than the lapse
      expect(core.isQuorate(next - 1)).toBe(true);
      c.now = next;
      core.tick(c.now);
      c.settle();
    }
    // it stepped down at the first moment it was not quorate, a max election timeout after f3's
    // last answer (at most a heartbeat before the cut), while f4 still answered
    expect(core.isLeader()).toBe(false);
    expect(c.now).toBeGreaterThan(cutAt + 333 - 50);
    expect(c.now).toBeLessThanOrEqual(cutAt + 333);
  });

  it("a follower's deadline comes no later than the lapse of its leader's contact", () => {
    // a damaged member does not campaign at its election deadline, it only draws the next one,
    // which can fall after the moment its leader's contact lapses (isQuorate turns false)
    const core = new RaftCore(
      { id: 'a', members: ['a', 'b', 'c'], random: () => 0.99 },
      { hardState: { term: 1, vote: null, recovering: 'damaged' }, entries: [] },
      0,
    );
    core.step({ type: 'heartbeat', from: 'b', to: 'a', term: 1, commit: 0 }, 0);
    expect(core.isQuorate(0)).toBe(true);
    let now = 0;
    for (let i = 0; i < 10 && core.isQuorate(now); i++) {
      const next = core.nextDeadline(now);
      expect(next).toBeLessThanOrEqual(300); // the contact at 0 + the max election timeout
      expect(core.isQuorate(next - 0.5)).toBe(true);
      now = next;
      core.tick(now);
    }
    expect(now).toBe(300);
    expect(core.isQuorate(now)).toBe(false);
    expect(core.currentRole).toBe('follower'); // damaged: it never campaigned
  });

  it('moves earlier when the leader is gone (peerDisconnected)', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const f = c.ids.find((id) => id !== l)!;
    const before = c.core(f).nextDeadline(c.now);
    c.core(f).peerDisconnected(l, c.now);
    const after = c.core(f).nextDeadline(c.now);
    expect(after).toBeLessThan(before);
    // leaderLostDelay 10 + rank x stagger 40 (+ half a stagger of jitter)
    expect(after - c.now).toBeLessThanOrEqual(10 + 40 * 1.5);
  });
});
