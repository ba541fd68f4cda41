import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { Cluster, data } from './lockstep-cluster.js';

describe('RaftCore', () => {
  it('elects one leader, commits proposals and applies them everywhere in order', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const p1 = c.core(l).propose(data('x'), c.now);
    const p2 = c.core(l).propose(data('y'), c.now);
    c.run(200);
    for (const id of c.ids) {
      const keys = c.applied
        .get(id)!
        .filter((e) => e.data)
        .map((e) => new TextDecoder().decode(e.data!));
      expect(keys).toEqual(['x', 'y']);
    }
    expect(c.core(l).proposalStatus(p1.index, p1.term)).toBe('committed');
    expect(c.core(l).proposalStatus(p2.index, p2.term)).toBe('committed');
    expect(c.core(l).canServeReads(c.now)).toBe(true);
    for (const id of c.ids) expect(c.core(id).isQuorate(c.now)).toBe(true);
  });

  it('followers learn a new commit index at once, not at the next heartbeat', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    c.core(l).propose(data('now'), c.now);
    c.settle(); // no tick: only the messages the proposal itself causes
    for (const id of c.ids) {
      const keys = c.applied
        .get(id)!
        .filter((e) => e.data)
        .map((e) => new TextDecoder().decode(e.data!));
      expect({ id, keys }).toEqual({ id, keys: ['now'] });
    }
  });

  it('persists a granted vote in the same Ready that carries the grant', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    for (const id of c.ids) {
      for (const r of c.readies.get(id)!) {
        for (const m of r.messages) {
          if (m.type === 'vote-response' && m.granted && !m.pre) {
            expect(r.persist.hardState).toEqual({ term: m.term, vote: m.to });
          }
        }
      }
    }
  });

  it('pre-vote: a member cut off for a long time does not raise its term or depose the leader', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const term = c.core(l).currentTerm;
    const f = c.ids.find((id) => id !== l)!;
    c.isolate(f);
    c.run(3000);
    expect(c.core(f).currentTerm).toBe(term);
    expect(c.core(f).isQuorate(c.now)).toBe(false);
    c.heal();
    c.run(1000);
    expect(c.leader()).toBe(l);
    expect(c.core(l).currentTerm).toBe(term);
  });

  it('without pre-vote the returning member does disrupt (the property the test checks is real)', () => {
    const c = new Cluster(['a', 'b', 'c'], { preVote: false, checkQuorum: false });
    c.run(1000);
    const l = c.leader();
    const term = c.core(l).currentTerm;
    const f = c.ids.find((id) => id !== l)!;
    c.isolate(f);
    c.run(3000);
    expect(c.core(f).currentTerm).toBeGreaterThan(term);
    c.heal();
    c.run(1000);
    expect(c.core(c.leader()).currentTerm).toBeGreaterThan(term);
  });

  describe("the leader's connection closed (peerDisconnected)", () => {
    // the member's timeouts (assembly/member.ts)
    const timeouts = { electionTimeoutMin: 400, electionTimeoutMax: 800 };
    function killLeader(hint: boolean) {
      const c = new Cluster(['a', 'b', 'c'], timeouts);
      c.run(3000);
      const old = c.leader();
      const term = c.core(old).currentTerm;
      c.isolate(old); // dead: it neither hears nor is heard
      const survivors = c.ids.filter((id) => id !== old);
      if (hint) for (const id of survivors) c.core(id).peerDisconnected(old, c.now);
      const elected = () => survivors.filter((id) => c.core(id).isLeader());
      let ms = 0;
      while (elected().length === 0 && ms < 5000) {
        c.run(5);
        ms += 5;
      }
      return { c, old, term, ms, elected };
    }

    it('the followers elect a new leader within tens of ms, not an election timeout', () => {
      const { c, term, ms, elected } = killLeader(true);
      expect(ms).toBeLessThan(150);
      expect(elected()).toHaveLength(1);
      expect(c.core(elected()[0]!).currentTerm).toBe(term + 1);
    });

    it('without the hint they wait for their election timeout (what the test measures is real)', () => {
      expect(killLeader(false).ms).toBeGreaterThanOrEqual(400);
    });

    it('retries the pre-vote soon when the first one was refused (a peer still in lease, a shorter log)', () => {
      const c = new Cluster(['a', 'b', 'c'], timeouts);
      c.run(3000);
      const old = c.leader();
      const [f1, f2] = c.ids.filter((id) => id !== old) as [string, string];
      // f1 holds an entry f2 lacks, so f1 refuses f2's pre-vote (log not up to date)
      c.intercept = (m) => (m.to === f2 && m.type === 'append' ? null : m);
      c.core(old).propose(data('x'), c.now);
      c.settle();
      c.intercept = (m) => m;
      expect(c.core(f1).log.lastIndex()).toBeGreaterThan(c.core(f2).log.lastIndex());
      c.isolate(old);
      // f1 learns at once; f2 only after f1's first pre-vote was refused by its lease
      c.core(f1).peerDisconnected(old, c.now);
      let ms = 0;
      while (c.core(f1).currentRole !== 'pre-candidate' && ms < 1000) {
        c.run(5);
        ms += 5;
      }
      c.core(f2).peerDisconnected(old, c.now);
      while (!c.core(f1).isLeader() && ms < 5000) {
        c.run(5);
        ms += 5;
      }
      expect(c.core(f1).isLeader()).toBe(true);
      expect(ms).toBeLessThan(300);
    });

    it('two survivors pre-campaigning at once do not split the vote: the later-ranked gives way', () => {
      const c = new Cluster(['a', 'b', 'c'], timeouts);
      c.run(3000);
      const old = c.leader();
      const survivors = c.ids.filter((id) => id !== old);
      c.isolate(old);
      for (const id of survivors) c.core(id).peerDisconnected(old, c.now);
      // a loaded host: each one's pre-vote arrives only after the other started its own
      const held: Message[] = [];
      c.intercept = (m) => {
        if (m.type !== 'vote' || !m.pre) return m;
        held.push(m);
        return null;
      };
      let ms = 0;
      while (!survivors.every((id) => c.core(id).currentRole === 'pre-candidate') && ms < 1000) {
        c.run(5);
        ms += 5;
      }
      c.intercept = (m) => m;
      for (const m of held.splice(0)) c.core(m.to).step(m, c.now);
      c.settle();
      while (!survivors.some((id) => c.core(id).isLeader()) && ms < 5000) {
        c.run(5);
        ms += 5;
      }
      expect(ms).toBeLessThan(300);
    });

    it('a hint about a live leader on one follower does not depose it (the other still hears it)', () => {
      const c = new Cluster(['a', 'b', 'c'], timeouts);
      c.run(3000);
      const l = c.leader();
      const term = c.core(l).currentTerm;
      const f = c.ids.find((id) => id !== l)!;
      c.core(f).peerDisconnected(l, c.now);
      c.run(2000);
      expect(c.leader()).toBe(l);
      expect(c.core(l).currentTerm).toBe(term);
    });

    it('a hint about a member that is not the leader changes nothing', () => {
      const c = new Cluster(['a', 'b', 'c'], timeouts);
      c.run(3000);
      const l = c.leader();
      const [f, g] = c.ids.filter((id) => id !== l) as [string, string];
      const term = c.core(l).currentTerm;
      c.core(f).peerDisconnected(g, c.now);
      c.run(2000);
      expect(c.leader()).toBe(l);
      expect(c.core(f).currentTerm).toBe(term);
    });
  });

  it('check-quorum: a leader cut off from the majority steps down; the majority elects another', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    c.isolate(l);
    c.run(700);
    expect(c.core(l).isLeader()).toBe(false);
    expect(c.core(l).isQuorate(c.now)).toBe(false);
    const others = c.leaders();
    expect(others).toHaveLength(1);
    expect(others[0]).not.toBe(l);
  });

  it('reports a proposal of a deposed leader as lost once its entry is overwritten', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    c.isolate(l);
    const p = c.core(l).propose(data('doomed'), c.now);
    c.run(700);
    const nl = c.leaders().find((id) => id !== l)!;
    c.core(nl).propose(data('winner'), c.now);
    c.run(100);
    c.heal();
    c.run(500);
    expect(c.core(l).proposalStatus(p.index, p.term)).toBe('lost');
    expect(c.readies.get(l)!.some((r) => r.truncatedFrom !== undefined && r.truncatedFrom <= p.index)).toBe(
      true,
    );
    const keys = c.applied
      .get(l)!
      .filter((e) => e.data)
      .map((e) => new TextDecoder().decode(e.data!));
    expect(keys).toEqual(['winner']);
  });

  it('sends a snapshot to a member that is behind the compacted log', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const f = c.ids.find((id) => id !== l)!;
    c.isolate(f);
    for (let i = 0; i < 20; i++) c.core(l).propose(data(`v${i}`), c.now);
    c.run(100);
    const applied = c.core(l).appliedIndex;
    c.core(l).compact(applied, data('state'));
    c.run(50);
    c.heal();
    c.run(500);
    const installed = c.readies.get(f)!.find((r) => r.restoreSnapshot);
    expect(installed?.restoreSnapshot?.index).toBe(applied);
    expect(c.core(f).commitIndex).toBeGreaterThanOrEqual(applied);
  });

  it('refuses proposals on a follower with the leader id', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    const f = c.ids.find((id) => id !== l)!;
    expect(() => c.core(f).propose(data('no'), c.now)).toThrow(/not the leader/);
  });

  it('restarts from its store alone: a whole cluster restart elects the member with the newest log', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const l = c.leader();
    for (let i = 0; i < 5; i++) c.core(l).propose(data(`v${i}`), c.now);
    c.run(200);
    const commit = c.core(l).commitIndex;
    for (const id of c.ids) c.boot(id);
    c.run(1500);
    const nl = c.leader();
    expect(c.core(nl).log.lastIndex()).toBeGreaterThanOrEqual(commit);
    c.core(nl).propose(data('after'), c.now);
    c.run(200);
    expect(c.core(nl).commitIndex).toBeGreaterThan(commit);
  });

  it('a leader counts its own entry toward a commit only once its write is durable', () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(500);
    const leader = c.core(c.leader());
    const follower = c.ids.find((id) => id !== c.leader())!;
    const x = leader.propose(data('X'), c.now);
    // the leader's append leaves at once, before its own write; one follower persists and answers
    const appends = leader.takeEagerMessages().filter((m) => m.type === 'append' && m.to === follower);
    expect(appends.length).toBeGreaterThan(0);
    for (const m of appends) c.core(follower).step(m, c.now);
    const answers: Message[] = [];
    while (c.core(follower).hasReady()) {
      const r = c.core(follower).takeReady();
      c.stores.get(follower)!.applyPersist(r.persist);
      answers.push(...r.messages);
      c.core(follower).advance(r);
    }
    expect(answers.some((m) => m.type === 'append-response')).toBe(true);
    for (const m of answers) if (m.to === leader.id) leader.step(m, c.now);
    // one durable copy of three (the follower's): not a majority until the leader's own write is done
    expect(leader.commitIndex, "committed on the leader's unsynced log").toBeLessThan(x.index);
    const r = leader.takeReady();
    c.stores.get(leader.id)!.applyPersist(r.persist);
    leader.advance(r);
    expect(leader.commitIndex).toBe(x.index);
  });

  it("a damaged follower's commit moves only by appends checked against the leader's log, not by heartbeats", () => {
    const c = new Cluster(['a', 'b', 'c']);
    c.run(1000);
    const first = c.leader();
    const firstTerm = c.core(first).currentTerm;
    // a second term, so that a stale entry of the first one can sit under the leader's commit
    c.isolate(first);
    c.run(1500);
    c.heal();
    c.run(500);
    const l = c.leader();
    const follower = c.ids.find((id) => id !== l)!;
    c.core(l).propose(data('x'), c.now);
    c.run(200);
    const commit = c.core(l).commitIndex;
    expect(c.core(follower).commitIndex).toBe(commit);
    // its store comes back damaged holding an entry it had replaced (a lost truncate record)
    const store = c.stores.get(follower)!;
    const at = commit - 1;
    expect(store.termAt(at)).toBeGreaterThan(firstTerm);
    store.entries.length = at - store.base.index - 1;
    store.entries.push({ index: at, term: firstTerm, data: data('stale') });
    store.hardState = { ...store.hardState, recovering: 'damaged' };
    c.applied.set(follower, []);
    c.boot(follower);
    // the leader still takes it to hold what it acknowledged: its heartbeats carry the commit
    c.run(300);
    c.core(l).propose(data('y'), c.now);
    c.run(500);
    expect(c.conflicts()).toEqual([]);
    expect(c.core(follower).recoveringReason).toBeNull();
    expect(c.core(follower).commitIndex).toBe(c.core(l).commitIndex);
  });

  describe('Raft figure 8 (committing an entry of an earlier term by counting replicas)', () => {
    const fast = { electionTimeoutMin: 50, electionTimeoutMax: 60 };
    const slow = { electionTimeoutMin: 5000, electionTimeoutMax: 5001 };

    function scenario(commitOldTermsByCount: boolean): Cluster {
      const ids = ['a', 'b', 'c', 'd', 'e'];
      const c = new Cluster(ids, { maxBytesPerAppend: 20, unsafe: { commitOldTermsByCount } });
      const make = (leader: string) => {
        for (const id of ids) c.boot(id, id === leader ? fast : slow);
      };
      make('a');
      c.run(500);
      expect(c.leader()).toBe('a');
      c.core('a').propose(data('v0'), c.now);
      c.run(100);
      // 1. a replicates X only to b
      c.partition([['a', 'b'], ['c'], ['d'], ['e']]);
      const x = c.core('a').propose(data('X'), c.now);
      c.settle();
      // 2. e wins with c, d and appends its no-op at X's index, which reaches nobody
      make('e');
      c.partition([['c', 'd', 'e'], ['a'], ['b']]);
      c.intercept = (m) => (m.from === 'e' && m.type === 'append' && m.entries.length > 0 ? null : m);
      c.run(1000);
      expect(c.core('e').isLeader()).toBe(true);
      expect(c.core('e').log.term(x.index)).toBeGreaterThan(x.term);
      // 3. a comes back and wins with b, c, d; its own no-op never leaves it; X reaches c and d
      make('a');
      c.partition([['a', 'b', 'c', 'd'], ['e']]);
      c.intercept = (m) =>
        m.from === 'a' && m.type === 'append'
          ? { ...m, entries: m.entries.filter((en) => en.index <= x.index) }
          : m;
      c.run(1500);
      expect(c.core('a').isLeader()).toBe(true);
      // 4. a is gone; e comes back with its newer-term entry at X's index and wins
      make('e');
      c.intercept = (m) => m;
      c.partition([['b', 'c', 'd', 'e'], ['a']]);
      c.run(1500);
      expect(c.core('e').isLeader()).toBe(true);
      return c;
    }

    it('is caught: with the broken rule a committed entry is overwritten', () => {
      expect(scenario(true).conflicts().length).toBeGreaterThan(0);
    });

    it('does not happen with the rule: entries of earlier terms commit only under a current-term entry', () => {
      expect(scenario(false).conflicts()).toEqual([]);
    });
  });
});
