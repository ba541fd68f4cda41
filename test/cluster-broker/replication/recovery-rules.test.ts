/**
 * The rules that end a member's recovery (docs/production.md#damaged-cluster-member), each with the
 * simulation seed that found it replayed in lock step: a seed plays its bug only while every timer
 * of its run stays as it was, a lock-step scenario sets the order of events itself. Each scenario runs
 * with the fixed rule (safe) and with the old one (UnsafeFlags), where it must break the
 * property it checks, or it no longer plays the bug.
 */
import { describe, expect, it } from 'vitest';
import type { Message, UnsafeFlags } from '../../../src/cluster-broker/replication/raft/types.js';
import { Cluster, data } from './lockstep-cluster.js';
import { damageMeta, wipe } from './lockstep-losses.js';
import { leadersOf, safetyViolations } from './lockstep-safety.js';

/** The other two of three members, in the cluster's order. */
function others(c: Cluster, id: string): [string, string] {
  const [first, second] = c.ids.filter((o) => o !== id);
  return [first!, second!];
}

/**
 * Simulation seed 33,200: a leader of term 1, stalled and cut off, goes on leading term 1 while
 * the member that followed it leads term 2 with the third; that member's data dir is emptied,
 * then its meta.json damaged (it forgets term 2, its vote and its entries). The stale leader
 * catches it up; the old rule declared it caught up on the term-1 commit, which the member's own
 * acknowledgements from before the loss had counted. Recovered, it grants the stale leader its vote
 * in term 2, the term it had led.
 */
function staleLeaderEndsRecovery(unsafe: UnsafeFlags = {}) {
  const c = new Cluster(['n1', 'n2', 'n3'], { unsafe });
  // n2 hears nothing in term 1: its empty log lets only the follower win term 2
  c.isolate('n2');
  c.run(1000);
  const stale = c.leader();
  const lost = others(c, 'n2').find((id) => id !== stale)!;
  for (let i = 0; i < 3; i++) c.core(stale).propose(data(`v${i}`), c.now);
  c.run(300);
  expect(c.core(lost).commitIndex).toBe(c.core(stale).commitIndex);

  c.partition([[stale], [lost, 'n2']]);
  c.stall(stale);
  c.run(1000);
  // the stalled one still counts itself leader of term 1
  expect(c.leaders().sort()).toEqual([stale, lost].sort());
  expect(c.core(lost).currentTerm).toBe(2);
  expect(c.core(stale).currentTerm).toBe(1);

  wipe(c, lost);
  c.run(100); // restarted blank, then restarted again with its meta.json damaged
  damageMeta(c, lost);
  c.partition([[stale, lost], ['n2']]);
  c.resume(stale);
  expect(c.core(stale).isLeader()).toBe(true);
  // a client write at the stale leader: the member's answer tells it the member is recovering
  c.core(stale).propose(data('w'), c.now);
  c.run(300);
  // it holds the whole log again: only the rule for ending its recovery is left to decide
  expect(c.core(stale).matchIndexOf(lost)).toBe(c.core(stale).log.lastIndex());

  // both restart (as in the seed); the member's longer timeout lets the stale leader stand first
  c.boot(stale);
  c.boot(lost, { electionTimeoutMin: 1000, electionTimeoutMax: 1100 });
  c.run(600);
  return { c, stale, lost };
}

/**
 * Simulation seed 304,200: the leader declares the damaged member caught up, but the member stops
 * running before the news reaches it; the leader commits entries with it that the third member
 * lacks. The member's data dir is emptied, then its meta.json damaged; the news, held in the
 * network all along, reaches this later incarnation. The old rule took it: recovered with an empty
 * log, the member votes for the third, which wins without the committed entries.
 */
function lateNewsOfRecovery(unsafe: UnsafeFlags = {}) {
  const c = new Cluster(['n1', 'n2', 'n3'], { unsafe });
  c.run(1000);
  const leader = c.leader();
  const [behind, lost] = others(c, leader);
  c.core(leader).propose(data('v0'), c.now);
  c.run(300);

  damageMeta(c, lost);
  // the news of its recovery is held in the network (in the seed the member stalled as it was
  // sent, and its later incarnation got it): this incarnation never hears it
  const news: Message[] = [];
  c.intercept = (m) => {
    if (m.type !== 'heartbeat' || !m.recovered || m.to !== lost) return m;
    news.push(m);
    return null;
  };
  // its answer to this write tells the leader it is recovering; the proof commits with `behind`
  c.core(leader).propose(data('v1'), c.now);
  c.run(300);
  expect(news.length).toBeGreaterThan(0);
  expect(c.core(lost).recoveringReason).toBe('damaged');

  // declared caught up, its acknowledgements count: these commit without `behind`
  c.isolate(behind);
  for (let i = 0; i < 3; i++) c.core(leader).propose(data(`w${i}`), c.now);
  c.run(300);
  expect(c.core(leader).commitIndex).toBe(c.core(leader).log.lastIndex());
  expect(c.core(behind).log.lastIndex()).toBeLessThan(c.core(leader).commitIndex);

  c.partition([[leader], [behind], [lost]]);
  wipe(c, lost);
  c.run(100);
  damageMeta(c, lost);
  c.intercept = (m) => m;
  c.partition([[leader], [behind, lost]]);
  for (const m of news) c.core(lost).step(m, c.now);
  c.run(1500);
  return { c, behind, lost };
}

describe('the end of a recovery', () => {
  it('comes only from a leader that committed a fresh entry without the member: a stale leader cannot end it', () => {
    const { c, lost } = staleLeaderEndsRecovery();
    expect(safetyViolations(c)).toEqual([]);
    expect(c.core(lost).recoveringReason).toBe('damaged');
  });

  it('is caught: with the old rule (any commit of the leader term) the stale leader is elected again in term 2', () => {
    const { c, stale, lost } = staleLeaderEndsRecovery({ endRecoveryOnOldCommit: true });
    expect(leadersOf(c, 2).sort()).toEqual([stale, lost].sort());
    expect(safetyViolations(c)).toContain(`two leaders in term 2: ${leadersOf(c, 2).join(' and ')}`);
  });

  it('comes only from news about this incarnation: news held since an earlier one does not end it', () => {
    const { c, lost } = lateNewsOfRecovery();
    expect(safetyViolations(c)).toEqual([]);
    expect(c.core(lost).recoveringReason).toBe('damaged');
  });

  it('is caught: with the old rule (any news of recovery) a leader without the committed entries wins', () => {
    const { c, behind } = lateNewsOfRecovery({ acceptStaleRecoveredNews: true });
    expect(c.leaders()).toEqual([behind]);
    const lacking = safetyViolations(c).filter((v) => v.startsWith(`leader ${behind} lacks committed entry`));
    expect(lacking).not.toEqual([]);
  });
});
