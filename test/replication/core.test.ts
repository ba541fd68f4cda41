import { describe, expect, it } from 'vitest';
import { RaftCore } from '../../src/cluster-broker/replication/core.js';
import { StoreImage } from '../../src/cluster-broker/replication/store-image.js';
import type { Entry, Message, RaftConfig, Ready } from '../../src/cluster-broker/replication/types.js';
import { Rng } from './sim/rng.js';

/** A tiny lock-step cluster: instant delivery, cuttable links, in-memory stores, manual clock. */
class Cluster {
  now = 0;
  readonly cores = new Map<string, RaftCore>();
  readonly stores = new Map<string, StoreImage>();
  readonly applied = new Map<string, Entry[]>();
  readonly readies = new Map<string, Ready[]>();
  private cut = new Set<string>();
  private rng = new Rng(7);

  constructor(
    readonly ids: string[],
    private readonly extra: Partial<RaftConfig> = {},
  ) {
    for (const id of ids) {
      this.stores.set(id, new StoreImage());
      this.applied.set(id, []);
      this.readies.set(id, []);
      this.boot(id);
    }
  }

  boot(id: string): void {
    const core = new RaftCore(
      { id, members: this.ids, random: () => this.rng.next(), ...this.extra },
      this.stores.get(id)!.toInitialState(),
      this.now,
    );
    this.cores.set(id, core);
  }

  core(id: string): RaftCore {
    return this.cores.get(id)!;
  }

  isolate(id: string): void {
    for (const o of this.ids) if (o !== id) this.cut.add(`${id}>${o}`).add(`${o}>${id}`);
  }

  heal(): void {
    this.cut.clear();
  }

  /** Process every Ready and deliver every message until nothing moves. */
  settle(): void {
    for (let round = 0; round < 1000; round++) {
      const queue: Message[] = [];
      for (const [id, core] of this.cores) {
        queue.push(...core.takeEagerMessages());
        while (core.hasReady()) {
          const r = core.takeReady();
          this.readies.get(id)!.push(r);
          this.stores.get(id)!.applyPersist(r.persist);
          queue.push(...r.messages);
          if (r.restoreSnapshot) this.applied.set(id, []);
          this.applied.get(id)!.push(...r.apply);
          core.advance(r);
          queue.push(...core.takeEagerMessages());
        }
      }
      if (queue.length === 0) return;
      for (const m of queue) {
        if (this.cut.has(`${m.from}>${m.to}`)) continue;
        this.cores.get(m.to)?.step(m, this.now);
      }
    }
    throw new Error('no quiescence');
  }

  run(ms: number): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now += 5;
      for (const c of this.cores.values()) c.tick(this.now);
      this.settle();
    }
  }

  leaders(): string[] {
    return this.ids.filter((id) => this.core(id).isLeader());
  }

  leader(): string {
    const l = this.leaders();
    expect(l).toHaveLength(1);
    return l[0]!;
  }
}

const data = (s: string) => new TextEncoder().encode(s);

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
});
