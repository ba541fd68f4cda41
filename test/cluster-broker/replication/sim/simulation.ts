/**
 * Deterministic simulation of a Raft cluster in one process, running the real `Replica` of every
 * member (sim-member.ts: its Ready loop, its FileStorage with recovery, its eager leader sends)
 * on a seeded network (loss, delay, reordering, duplication, partitions of every shape), a seeded
 * clock and timer, and a disk whose syncs complete at a simulated time and whose crash drops
 * unsynced writes (or tears the last one). Members crash, restart and stall at random. The
 * Checker runs on every step. After the fault phase the network heals and every member restarts:
 * a leader must be elected and a new entry must commit on every member within a bounded
 * simulated time (liveness).
 *
 * A fifth of the seeds play Raft figure 8 instead of random faults (figure8.ts): partitions
 * timed on elections and on a leader applying an entry of an earlier term, round after round,
 * with seeded members and delays. A leader that commits such an entry by counting loses it
 * there, which random faults almost never line up (about four short reigns in a row).
 *
 * One event at a time: the event runs, then every microtask it caused (the Replicas' Ready loops,
 * FileStorage's file operations) settles before the next event, so a seed replays exactly.
 *
 * Disk corruption: a member about to restart may find a byte of its store flipped (its log, its
 * vote record or its snapshot), one of its files gone, or its data dir emptied (sim-member.ts,
 * StoreLoss); FileStorage's recovery then quarantines the damage, or starts blank, and the member
 * must not act on what it lost. At most a minority recovers at once (a majority of damaged stores
 * is outside the fault model), and when any member is still recovering at the heal, every member
 * comes back: the only intact copy of an entry may be on the one left out.
 */

import type { Entry, Message, UnsafeFlags } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { UnsafeDriverFlags } from '../../../../src/cluster-broker/replication/replica-seams.js';
import { amqpWireCodec } from '../../../../src/cluster-broker/replication/wire.js';
import { Checker, payloadKey, SafetyViolation } from './checker.js';
import { describe } from './describe.js';
import { EventQueue } from './event-queue.js';
import { type Figure8Host, Figure8Schedule } from './figure8.js';
import { Rng } from './rng.js';
import { type SimHost, SimMember, STORE_LOSSES, type StoreLoss } from './sim-member.js';

export interface SimOptions {
  seed: number;
  nodes?: number;
  /** Length of the fault phase, simulated ms. Default 3000. */
  faultMs?: number;
  /** After healing, a new entry must be applied on the whole majority within this many simulated ms. Default 5000. */
  livenessMs?: number;
  /** Bugs of the Raft core for the checker to catch. */
  unsafe?: UnsafeFlags;
  /** Bugs of the Replica driver for the checker to catch (replica-seams.ts). */
  unsafeDriver?: UnsafeDriverFlags;
  /** Keep the last N events for a failure report (0: none; replay a failing seed with it on). */
  trace?: number;
  /** Flip bytes of stopped members' stores (default true; the rate is drawn per seed). */
  corruption?: boolean;
  /**
   * What a damaged store loses, drawn from a stream of its own (default every kind of
   * STORE_LOSSES). `['flip']` replays the seeds as they ran before files could go missing.
   */
  losses?: readonly StoreLoss[];
}

export interface SimResult {
  seed: number;
  ok: boolean;
  error?: string;
  trace?: string[];
  steps: number;
  simMs: number;
  elections: number;
  committed: number;
  /** Stores found corrupt at a restart. */
  corruptions: number;
  /** Each kind of loss, counted when another member was down at the time (a crash besides). */
  lossesWithAnotherDown: Partial<Record<StoreLoss, number>>;
  /** Simulated ms from healing to the first post-heal entry applied on every member. */
  recoveryMs?: number;
}

type SimEvent =
  | { k: 'deliver'; msg: Message }
  /** A member's timer tick or sync completion; dropped when the member crashed since. */
  | { k: 'run'; node: number; epoch: number; fire: () => void }
  | { k: 'resume'; node: number; epoch: number; ms: number }
  | { k: 'depose'; node: number; epoch: number; term: number }
  | { k: 'rejoin'; node: number }
  /** A step of the figure-8 schedule (figure8.ts); dropped after the heal. */
  | { k: 'script'; fire: () => void }
  | { k: 'propose' }
  | { k: 'fault' }
  | { k: 'heal' };

class LivenessViolation extends Error {}

/** The figure-8 choice draws from its own stream (seed + this), and this share of seeds plays it. */
const FIGURE8_STREAM = 0x0f18;
/** The kind of each store loss draws from its own stream too, so the schedule stays the same. */
const LOSS_STREAM = 0x1055;
const FIGURE8_SHARE = 0.2;

/** Normal runs keep a few thousand events pending at most. */
const MAX_PENDING_EVENTS = 100_000;

/** Every microtask queued so far, and every one those queue, has run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class Simulation implements SimHost {
  readonly rng: Rng;
  readonly checker = new Checker();
  readonly ids: string[];
  private readonly q = new EventQueue<SimEvent>();
  private readonly nodes: SimMember[];
  private readonly traceSize: number;
  private readonly traceBuf: string[] = [];
  private clock = 0;
  private steps = 0;
  private elections = 0;
  private proposals = 0;
  private failure: unknown;
  /** conn[a][b]: messages from a reach b. */
  private conn: boolean[][];
  private loss = 0;
  private dup = 0;
  private delayMax = 3;
  private healed = false;
  private healAt = 0;
  /** Payload keys proposed after healing; liveness holds once one is applied everywhere. */
  private probeKeys = new Set<string>();
  private probeApplied = new Map<string, number>();
  /** Members in the healed majority (all of them unless some were left out). */
  private majority = 0;
  private live = false;
  private recoveryMs: number | undefined;
  private readonly faultMs: number;
  private readonly livenessMs: number;
  /** Mean gap between faults (ms), and the chance a member crashes just before a sync completes. */
  private readonly faultGap: number;
  private readonly crashAtSync: number;
  /** Longest simulated sync (ms). */
  private readonly syncMaxMs: number;
  /** Pass every message through the AMQP wire codec (encode + decode), as the TCP transport does. */
  private readonly viaWire: boolean;
  /**
   * Leader churn (half the seeds): leaders are cut off at their election, within a few ms, or
   * right after a commit, and come back later; fewer random faults besides. The other seeds keep
   * the plain fault mix.
   */
  private readonly churn: boolean;
  /**
   * A fifth of the seeds (chosen apart from the main stream, so the others run as before) play
   * Raft figure 8 (figure8.ts) instead of random faults: one entry per append, no crashes.
   */
  private readonly figure8: Figure8Schedule | undefined;
  /** Chance that a restarting member finds its store corrupt. */
  private readonly corruptAtRestart: number;
  private corruptions = 0;
  private readonly lossRng: Rng;
  private readonly losses: readonly StoreLoss[];
  private readonly lossesWithAnotherDown: Partial<Record<StoreLoss, number>> = {};

  constructor(private readonly opts: SimOptions) {
    this.rng = new Rng(opts.seed);
    const n = opts.nodes ?? 3;
    this.ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
    this.conn = this.ids.map(() => this.ids.map(() => true));
    this.traceSize = opts.trace ?? 0;
    this.faultMs = opts.faultMs ?? 3000;
    this.livenessMs = opts.livenessMs ?? 5000;
    const figure8 = new Rng(opts.seed + FIGURE8_STREAM).chance(FIGURE8_SHARE);
    const churn = this.rng.chance(0.5);
    this.churn = churn && !figure8;
    // churn seeds mostly send one entry per append: a follower acknowledges entries one by one
    const appendBytes = this.rng.pick(churn ? [20, 20, 1 << 20] : [20, 40, 1 << 20]);
    const maxBytesPerAppend = figure8 ? 20 : appendBytes;
    // churn seeds: fewer random faults, so the leader changes are not drowned in them
    this.faultGap = churn ? 300 : this.rng.pick([30, 100, 300]);
    const crashAtSync = this.rng.pick([0, 0.003, 0.02]);
    this.crashAtSync = figure8 ? 0 : crashAtSync;
    this.syncMaxMs = this.rng.pick([0.5, 2]);
    this.viaWire = this.rng.chance(0.1);
    this.corruptAtRestart = opts.corruption === false ? 0 : this.rng.pick([0, 0.2, 0.5]);
    this.lossRng = new Rng(opts.seed + LOSS_STREAM);
    this.losses = opts.losses ?? STORE_LOSSES;
    this.nodes = this.ids.map(
      (id, i) =>
        new SimMember(id, i, this, {
          maxBytesPerAppend,
          snapshotEvery: this.rng.int(3, 40),
          ...(opts.unsafe ? { unsafe: opts.unsafe } : {}),
          ...(opts.unsafeDriver ? { unsafeDriver: opts.unsafeDriver } : {}),
        }),
    );
    this.figure8 = figure8 ? new Figure8Schedule(this.figure8Host()) : undefined;
  }

  private figure8Host(): Figure8Host {
    return {
      rng: this.rng,
      size: this.nodes.length,
      leaders: () =>
        this.nodes
          .filter((x) => x.replica?.isLeader())
          .sort((a, b) => b.replica!.term - a.replica!.term)
          .map((x) => x.index),
      connect: (groups) => {
        this.setAll(false);
        for (const g of groups) for (const a of g) for (const b of g) this.conn[a]![b] = true;
        for (let a = 0; a < this.nodes.length; a++) this.conn[a]![a] = true;
        this.trace(() => `partition figure-8: ${this.describeConn()}`);
      },
      link: (a, b) => {
        this.link(a, b);
        this.trace(() => `partition figure-8: ${this.describeConn()}`);
      },
      later: (ms, fire) => this.q.push(this.clock + ms, { k: 'script', fire }),
      trace: (line) => this.trace(line),
    };
  }

  async run(): Promise<SimResult> {
    try {
      for (const node of this.nodes) node.start();
      await this.settle();
      this.q.push(this.rng.range(0, 50), { k: 'propose' });
      if (this.figure8) this.figure8.start();
      else this.q.push(this.rng.range(0, 200), { k: 'fault' });
      this.q.push(this.faultMs, { k: 'heal' });
      while (!this.live) {
        const ev = this.q.pop();
        if (!ev) throw new LivenessViolation('event queue ran dry');
        this.clock = ev.at;
        this.steps++;
        await this.handle(ev.event);
        await this.settle();
        // Messages that breed more messages than they consume never let simulated time reach the
        // liveness deadline: report the storm instead of looping on it.
        if (this.q.size > MAX_PENDING_EVENTS)
          throw new LivenessViolation(`message storm: over ${MAX_PENDING_EVENTS} events pending`);
        if (this.healed && this.clock > this.healAt + this.livenessMs) {
          throw new LivenessViolation(
            `no new entry committed on every member ${this.livenessMs} ms after healing`,
          );
        }
      }
      return this.result(true);
    } catch (err) {
      const kind =
        err instanceof SafetyViolation ? 'safety' : err instanceof LivenessViolation ? 'liveness' : 'crash';
      const message = err instanceof Error ? err.message : String(err);
      this.trace(`FAILED (${kind}): ${message}`);
      return { ...this.result(false), error: `${kind}: ${message}` };
    }
  }

  /** Let the step's microtasks run, then raise what a check found inside them. */
  private async settle(): Promise<void> {
    await settled();
    if (this.failure !== undefined) throw this.failure;
    for (const node of this.nodes) {
      const term = node.replica?.term ?? 0;
      if (term > this.checker.maxTerm) this.checker.maxTerm = term;
    }
  }

  private result(ok: boolean): SimResult {
    return {
      seed: this.opts.seed,
      ok,
      steps: this.steps,
      simMs: Math.round(this.clock),
      elections: this.elections,
      committed: this.checker.maxCommitted,
      corruptions: this.corruptions,
      lossesWithAnotherDown: this.lossesWithAnotherDown,
      ...(this.recoveryMs !== undefined ? { recoveryMs: Math.round(this.recoveryMs) } : {}),
      ...(this.traceSize > 0 ? { trace: [...this.traceBuf] } : {}),
    };
  }

  // ---- what the members see (SimHost) -----------------------------------------------------

  now(): number {
    return this.clock;
  }

  trace(line: string | (() => string)): void {
    if (this.traceSize === 0) return;
    this.traceBuf.push(`${this.clock.toFixed(2).padStart(9)} ${typeof line === 'string' ? line : line()}`);
    if (this.traceBuf.length > this.traceSize) this.traceBuf.shift();
  }

  fail(err: unknown): void {
    this.failure ??= err;
  }

  later(member: SimMember, ms: number, fire: () => void): void {
    this.q.push(this.clock + ms, { k: 'run', node: member.index, epoch: member.epoch, fire });
  }

  syncDone(member: SimMember): Promise<void> {
    return new Promise((resolve) =>
      this.later(member, this.rng.range(0.02, this.syncMaxMs), () => {
        if (!this.healed && this.rng.chance(this.crashAtSync)) this.crash(member.index);
        else resolve();
      }),
    );
  }

  elected(member: SimMember): void {
    this.elections++;
    if (!this.healed) this.figure8?.elected(member.index);
    // churn: many reigns end at once or within a few ms (their first appends lost with them)
    if (this.churn && this.rng.chance(0.5))
      this.deposeLater(member, this.rng.chance(0.5) ? 0 : this.rng.range(0.5, 20));
  }

  applied(member: SimMember, e: Entry): void {
    // churn: a leader may be cut off right after it commits, before its later appends arrive;
    // always right after it applies an entry of an earlier term (Raft figure 8's moment)
    const leader = member.replica?.isLeader() ? member.replica : undefined;
    if (leader && this.figure8 && !this.healed) this.figure8.applied(member.index, e, leader.term);
    if (this.churn && leader && (e.term < leader.term || this.rng.chance(0.2)))
      this.deposeLater(member, this.rng.range(0, 1));
    const key = payloadKey(e.data);
    if (!this.probeKeys.has(key)) return;
    const n = (this.probeApplied.get(key) ?? 0) + 1;
    this.probeApplied.set(key, n);
    if (n === this.majority && !this.live) {
      this.live = true;
      this.recoveryMs = this.clock - this.healAt;
    }
  }

  send(m: Message): void {
    if (this.viaWire) m = amqpWireCodec.decodeMessage(amqpWireCodec.encodeMessage(m));
    const from = this.ids.indexOf(m.from);
    const to = this.ids.indexOf(m.to);
    if (!this.conn[from]![to] || this.rng.chance(this.loss)) return;
    this.q.push(this.clock + this.rng.range(0.1, this.delayMax), { k: 'deliver', msg: m });
    if (this.rng.chance(this.dup))
      this.q.push(this.clock + this.rng.range(0.1, this.delayMax * 3), { k: 'deliver', msg: m });
  }

  // ---- events ------------------------------------------------------------------------------

  private async handle(ev: SimEvent): Promise<void> {
    const target = ev.k === 'deliver' ? this.ids.indexOf(ev.msg.to) : ev.k === 'run' ? ev.node : -1;
    if (target >= 0 && this.nodes[target]!.stalledUntil > this.clock) {
      // the member is not running: everything for it waits (in order) until it resumes
      this.q.push(this.nodes[target]!.stalledUntil, ev);
      return;
    }
    switch (ev.k) {
      case 'deliver': {
        const node = this.nodes[target]!;
        if (!node.replica) return;
        // a cut link also loses what was in flight on it
        if (!this.conn[this.ids.indexOf(ev.msg.from)]![target]) return;
        this.trace(() => `deliver ${describe(ev.msg)}`);
        node.deliver(ev.msg);
        return;
      }
      case 'run': {
        const node = this.nodes[ev.node]!;
        if (node.up && node.epoch === ev.epoch) ev.fire();
        return;
      }
      case 'resume': {
        const node = this.nodes[ev.node]!;
        if (!node.up || node.epoch !== ev.epoch) return;
        // the Replica's next tick sees the gap and does not blame its peers for the silence
        node.stalledUntil = 0;
        this.trace(`resume ${node.id} after ${ev.ms.toFixed(0)} ms`);
        return;
      }
      case 'depose': {
        const node = this.nodes[ev.node]!;
        if (this.healed || node.epoch !== ev.epoch || node.replica?.term !== ev.term) return;
        if (node.replica.isLeader()) this.depose(node);
        return;
      }
      case 'rejoin': {
        if (this.healed) return;
        for (let j = 0; j < this.nodes.length; j++) if (j !== ev.node) this.link(ev.node, j, true);
        this.trace(() => `rejoin ${this.ids[ev.node]}: ${this.describeConn()}`);
        return;
      }
      case 'script':
        if (!this.healed) ev.fire();
        return;
      case 'propose':
        this.propose();
        this.q.push(this.clock + this.rng.range(2, 40), { k: 'propose' });
        return;
      case 'fault':
        if (this.healed) return;
        await this.fault();
        this.q.push(this.clock + this.rng.range(1, 2 * this.faultGap), { k: 'fault' });
        return;
      case 'heal':
        await this.heal();
        return;
    }
  }

  private crash(i: number): void {
    const node = this.nodes[i]!;
    if (!node.up) return;
    const torn = this.rng.chance(0.5);
    node.crash(torn);
    this.trace(`crash ${node.id}${torn ? ' (last unsynced write torn)' : ''}`);
    // a dead process's sockets close: the members still connected to it learn within a delivery
    for (const other of this.nodes) {
      if (other !== node && other.up && this.conn[i]![other.index])
        this.later(other, this.delayMax, () => other.peerLost(node.id));
    }
  }

  private propose(): void {
    const leaders = this.nodes.filter((n) => n.replica?.isLeader());
    if (leaders.length === 0) return;
    const node = this.rng.pick(leaders);
    const replica = node.replica!;
    const key = `p${++this.proposals}`;
    // the outcome is the checker's business; a lost leadership only rejects the promise
    replica.propose(new TextEncoder().encode(key)).catch(() => {});
    if (this.healed) this.probeKeys.add(key);
    this.trace(() => `propose ${key} at ${node.id} -> ${replica.lastIndex}@${replica.term}`);
  }

  // ---- faults ------------------------------------------------------------------------------

  private setAll(v: boolean): void {
    this.conn = this.ids.map(() => this.ids.map(() => v));
  }

  private link(a: number, b: number, v = true): void {
    this.conn[a]![b] = v;
    this.conn[b]![a] = v;
  }

  private async fault(): Promise<void> {
    const n = this.nodes.length;
    const r = this.rng.next();
    if (r < 0.3) {
      const order = this.rng.shuffle([...Array(n).keys()]);
      const shape = this.rng.pick(['heal', 'isolate', 'split', 'ring', 'one-way', 'bridge'] as const);
      this.setAll(shape === 'heal' || shape === 'one-way');
      if (shape === 'isolate') {
        this.setAll(true);
        for (let j = 0; j < n; j++) if (j !== order[0]) this.link(order[0]!, j, false);
      } else if (shape === 'split') {
        const cut = this.rng.int(1, n - 1);
        for (let a = 0; a < n; a++)
          for (let b = 0; b < n; b++) this.conn[order[a]!]![order[b]!] = a < cut === b < cut;
      } else if (shape === 'ring') {
        for (let a = 0; a < n; a++) this.link(order[a]!, order[(a + 1) % n]!);
      } else if (shape === 'one-way') {
        this.conn[order[0]!]![order[1]!] = false;
      } else if (shape === 'bridge') {
        // two halves that only the bridge member connects
        const mid = Math.floor((n - 1) / 2);
        for (let a = 1; a < n; a++)
          for (let b = 1; b < n; b++) this.conn[order[a]!]![order[b]!] = a <= mid === b <= mid;
        for (let a = 1; a < n; a++) this.link(order[0]!, order[a]!);
      }
      for (let a = 0; a < n; a++) this.conn[a]![a] = true;
      this.trace(() => `partition ${shape}: ${this.describeConn()}`);
    } else if (r < 0.5) {
      const up = this.nodes.map((x, i) => (x.up ? i : -1)).filter((i) => i >= 0);
      if (up.length > 0) this.crash(this.rng.pick(up));
    } else if (r < 0.75) {
      const down = this.nodes.map((x, i) => (x.up ? -1 : i)).filter((i) => i >= 0);
      if (down.length > 0) {
        const i = this.rng.pick(down);
        if (this.rng.chance(this.corruptAtRestart)) await this.corrupt(i);
        this.nodes[i]!.start();
      }
    } else if (r < 0.8) {
      const up = this.nodes.map((x, i) => (x.up && x.stalledUntil === 0 ? i : -1)).filter((i) => i >= 0);
      if (up.length > 0) {
        const i = this.rng.pick(up);
        const node = this.nodes[i]!;
        const ms = this.rng.range(50, 1500);
        node.stalledUntil = this.clock + ms;
        this.q.push(node.stalledUntil, { k: 'resume', node: i, epoch: node.epoch, ms });
        this.trace(() => `stall ${node.id} for ${ms.toFixed(0)} ms`);
      }
    } else if (r < 0.87) {
      this.loss = this.rng.pick([0, 0.01, 0.05, 0.2]);
      this.dup = this.rng.pick([0, 0.01, 0.05]);
      this.delayMax = this.rng.pick([1, 3, 10, 40]);
      this.trace(`link quality loss=${this.loss} dup=${this.dup} delayMax=${this.delayMax}`);
    }
  }

  private deposeLater(member: SimMember, ms: number): void {
    if (this.healed) return;
    const term = member.replica!.term;
    this.q.push(this.clock + ms, { k: 'depose', node: member.index, epoch: member.epoch, term });
  }

  /**
   * Cut the leader off for a while: short reigns leave logs whose suffixes come from different
   * terms, the ground an unsafe commit rule needs to lose an entry (Raft figure 8).
   */
  private depose(node: SimMember): void {
    const i = node.index;
    for (let j = 0; j < this.nodes.length; j++) if (j !== i) this.link(i, j, false);
    this.trace(() => `cut off leader ${node.id}: ${this.describeConn()}`);
    this.q.push(this.clock + this.rng.range(20, 400), { k: 'rejoin', node: i });
  }

  /** Damage a stopped member's store (StoreLoss), unless that would leave a majority recovering. */
  private async corrupt(i: number): Promise<void> {
    const n = this.nodes.length;
    let others = 0;
    for (let j = 0; j < n; j++) if (j !== i && (await this.nodes[j]!.recovering())) others++;
    if (others + 1 > Math.floor((n - 1) / 2)) return;
    const loss = this.losses.length === 1 ? this.losses[0]! : this.lossRng.pick(this.losses);
    const what = await this.nodes[i]!.corrupt(loss);
    if (what === undefined) return;
    this.corruptions++;
    if (this.nodes.some((x, j) => j !== i && !x.up))
      this.lossesWithAnotherDown[loss] = (this.lossesWithAnotherDown[loss] ?? 0) + 1;
    this.trace(`corrupt ${this.ids[i]}: ${what}`);
  }

  private describeConn(): string {
    const parts: string[] = [];
    for (let a = 0; a < this.ids.length; a++) {
      const reach = this.ids.filter((_, b) => b !== a && this.conn[a]![b]);
      parts.push(`${this.ids[a]}->{${reach.join(',')}}`);
    }
    return parts.join(' ');
  }

  /**
   * End of the fault phase: a majority is connected, up and stable from here on. A random
   * minority may stay crashed or cut off; liveness is judged on the majority.
   */
  private async heal(): Promise<void> {
    this.healed = true;
    this.healAt = this.clock;
    this.setAll(true);
    this.loss = 0;
    this.dup = 0;
    this.delayMax = 3;
    const n = this.nodes.length;
    let anyRecovering = false;
    for (const node of this.nodes) if (await node.recovering()) anyRecovering = true;
    const leave = anyRecovering ? 0 : this.rng.int(0, Math.floor((n - 1) / 2));
    const left = this.rng.shuffle([...Array(n).keys()]).slice(0, leave);
    for (let i = 0; i < n; i++) {
      if (!left.includes(i)) {
        if (!this.nodes[i]!.up) this.nodes[i]!.start();
        continue;
      }
      if (this.rng.chance(0.5)) {
        this.crash(i);
      } else {
        if (!this.nodes[i]!.up) this.nodes[i]!.start();
        for (let j = 0; j < n; j++) if (j !== i) this.link(i, j, false);
      }
    }
    this.majority = n - left.length;
    this.trace(
      () =>
        `heal: majority of ${this.majority} connected and up; left out: ${left.map((i) => this.ids[i]).join(',') || 'none'}`,
    );
  }
}

export async function runSeed(opts: SimOptions): Promise<SimResult> {
  const r = await new Simulation(opts).run();
  if (!r.ok && !opts.trace) {
    // replay the same seed with the trace on: the run is deterministic, so it fails the same way
    return new Simulation({ ...opts, trace: 200 }).run();
  }
  return r;
}
