/** A tiny lock-step cluster of RaftCores for the core's tests. */
import { expect } from 'vitest';
import { RaftCore } from '../../../src/cluster-broker/replication/raft/core.js';
import type {
  Entry,
  Message,
  RaftConfig,
  Ready,
} from '../../../src/cluster-broker/replication/raft/types.js';
import { StoreImage } from '../../../src/cluster-broker/replication/store-image.js';
import { Rng } from './sim/rng.js';

/**
 * A tiny lock-step cluster: instant delivery, cuttable links, members that stall, in-memory
 * stores, manual clock.
 */
export class Cluster {
  now = 0;
  readonly cores = new Map<string, RaftCore>();
  readonly stores = new Map<string, StoreImage>();
  readonly applied = new Map<string, Entry[]>();
  readonly readies = new Map<string, Ready[]>();
  private cut = new Set<string>();
  /** Stalled members (stall), with when they stopped running. */
  private stalled = new Map<string, number>();
  /** Messages to a stalled member, waiting for it in order, as in its sockets. */
  private held: Message[] = [];
  private rng = new Rng(7);
  /** Network meddling: return null to lose a message, or a changed copy. */
  intercept: (m: Message) => Message | null = (m) => m;

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

  /** (Re)start a member from its store, optionally with its own config (e.g. timeouts). */
  boot(id: string, own: Partial<RaftConfig> = {}): void {
    // a restarted process runs; what waited for the old one went with its connections
    this.stalled.delete(id);
    this.held = this.held.filter((m) => m.to !== id);
    const core = new RaftCore(
      { id, members: this.ids, random: () => this.rng.next(), ...this.extra, ...own },
      this.stores.get(id)!.toInitialState(),
      this.now,
    );
    this.cores.set(id, core);
  }

  core(id: string): RaftCore {
    return this.cores.get(id)!;
  }

  /**
   * The member stops running (event loop stall, SIGSTOP): no ticks, and what reaches it waits. A
   * leader stalled this way is still leader when it resumes, however long the others went on.
   */
  stall(id: string): void {
    this.stalled.set(id, this.now);
  }

  /**
   * It runs again. As the Replica does on a late tick, it shifts its timers by the stall
   * (RaftCore.pause), so it does not blame its peers for its own silence; then it gets what waited.
   */
  resume(id: string): void {
    const since = this.stalled.get(id)!;
    this.stalled.delete(id);
    this.core(id).pause(this.now - since);
    const waited = this.held.filter((m) => m.to === id);
    this.held = this.held.filter((m) => m.to !== id);
    for (const m of waited) this.core(id).step(m, this.now);
    this.settle();
  }

  isolate(id: string): void {
    for (const o of this.ids) if (o !== id) this.cut.add(`${id}>${o}`).add(`${o}>${id}`);
  }

  heal(): void {
    this.cut.clear();
  }

  /** Only members of the same group reach each other. */
  partition(groups: string[][]): void {
    this.cut.clear();
    const g = (id: string) => groups.findIndex((x) => x.includes(id));
    for (const a of this.ids) for (const b of this.ids) if (g(a) !== g(b)) this.cut.add(`${a}>${b}`);
  }

  /** Two members that applied different entries at one index. */
  conflicts(): string[] {
    const byIndex = new Map<number, string>();
    const out: string[] = [];
    for (const [id, entries] of this.applied) {
      for (const e of entries) {
        const v = `${e.term}:${e.data ? new TextDecoder().decode(e.data) : '-'}`;
        const seen = byIndex.get(e.index);
        if (seen === undefined) byIndex.set(e.index, v);
        else if (seen !== v) out.push(`${id} applied ${e.index} as ${v}, another member as ${seen}`);
      }
    }
    return out;
  }

  /** Process every Ready and deliver every message until nothing moves. */
  settle(): void {
    for (let round = 0; round < 1000; round++) {
      const queue: Message[] = [];
      for (const [id, core] of this.cores) {
        if (this.stalled.has(id)) continue;
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
      for (const sent of queue) {
        const m = this.cut.has(`${sent.from}>${sent.to}`) ? null : this.intercept(sent);
        if (m === null) continue;
        if (this.stalled.has(m.to)) this.held.push(m);
        else this.cores.get(m.to)?.step(m, this.now);
      }
    }
    throw new Error('no quiescence');
  }

  run(ms: number): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now += 5;
      for (const [id, c] of this.cores) if (!this.stalled.has(id)) c.tick(this.now);
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

export const data = (s: string) => new TextEncoder().encode(s);
