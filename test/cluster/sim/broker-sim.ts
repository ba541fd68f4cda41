/**
 * Deterministic simulation of cluster members running the BROKER state machine: the real
 * RaftCore, the real ClusterStateMachine (BrokerState + cluster entries), the real entry codec,
 * seeded network (partitions, loss, delay, duplication), disks that lose unsynced writes, crashes
 * and restarts (new incarnations, release-owner), clock skew between leaders, and clients on
 * every member: producers (with in-doubt re-sends of the same message-id), competing consumers
 * (acquire, settle with every outcome, release, re-attach on another member = claim).
 *
 * Checked on every step: members that applied the same index hold byte-identical snapshots;
 * the delivery contract on the committed results (ContractChecker). At the end (network healed,
 * everyone up): every member converges on one state and no acknowledged message is lost.
 */
import { createHash } from 'node:crypto';
import {
  ClusterStateMachine,
  type EntryOutcome,
} from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { linkKeyOf, processKey, qualifyConsumer } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import {
  decodeEntry,
  type EntryBody,
  encodeEntry,
  stampEntry,
} from '../../../src/cluster-broker/cluster/entry-codec.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent, SettleOutcome } from '../../../src/cluster-broker/core/events.js';
import { RaftCore } from '../../../src/cluster-broker/replication/core.js';
import type { Entry, Message, Ready } from '../../../src/cluster-broker/replication/types.js';
import { EventQueue } from '../../replication/sim/event-queue.js';
import { Rng } from '../../replication/sim/rng.js';
import { SimDisk } from '../../replication/sim/sim-disk.js';
import { ContractChecker, ContractViolation } from './contract-checker.js';

export interface BrokerSimOptions {
  seed: number;
  nodes?: number;
  /** Simulated ms of faults and traffic. Default 2000. */
  faultMs?: number;
  /** After healing, every member must converge within this. Default 8000. */
  settleMs?: number;
  /**
   * A deliberate bug, so the test can show the checks catch it. Never set outside that test.
   * - 'local-clock': members apply events with their own clock instead of the leader's stamp;
   * - 'ack-on-append': producers are answered when the leader appends, not at commit + apply.
   */
  bug?: 'local-clock' | 'ack-on-append';
}

export interface BrokerSimResult {
  seed: number;
  ok: boolean;
  error?: string;
  committed: number;
  acked: number;
  enqueued: number;
  acquired: number;
  crashes: number;
  simMs: number;
}

type Ev =
  | { k: 'deliver'; msg: Message }
  | { k: 'forward'; to: number; request: Uint8Array }
  | { k: 'timer'; node: number; epoch: number }
  | { k: 'fsync'; node: number; epoch: number }
  | { k: 'client'; node: number; epoch: number; client: number }
  | { k: 'housekeeping' }
  | { k: 'fault' }
  | { k: 'heal' };

interface PendingReq {
  done: (o: EntryOutcome | undefined) => void;
  deadline: number;
}

interface Client {
  kind: 'producer' | 'consumer';
  link: string;
  held: number[];
}

interface SimNode {
  id: string;
  up: boolean;
  epoch: number;
  core: RaftCore | undefined;
  disk: SimDisk;
  inflight: Ready | undefined;
  timerAt: number;
  sm: ClusterStateMachine;
  incarnation: number;
  skew: number;
  seq: number;
  pending: Map<number, PendingReq>;
  clients: Client[];
  released: boolean;
  snapEvery: number;
}

const QUEUE = 'q';

function hashOf(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

export class BrokerSimulation {
  private readonly rng: Rng;
  private readonly q = new EventQueue<Ev>();
  private readonly nodes: SimNode[];
  private readonly ids: string[];
  private readonly checker = new ContractChecker();
  /** index -> hash of the state snapshot after applying it (first member to apply it). */
  private readonly stateAt = new Map<number, string>();
  private readonly acked = new Set<string>();
  private readonly withTtl = new Set<string>();
  private readonly inDoubt: string[] = [];
  private conn: boolean[][];
  private loss = 0;
  private dup = 0;
  private delayMax = 3;
  private now = 0;
  private healed = false;
  private healAt = 0;
  private keys = 0;
  private acquired = 0;
  private crashes = 0;
  private declared = false;
  private readonly faultMs: number;
  private readonly settleMs: number;

  constructor(private readonly opts: BrokerSimOptions) {
    this.rng = new Rng(opts.seed);
    const n = opts.nodes ?? 3;
    this.ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
    this.conn = this.ids.map(() => this.ids.map(() => true));
    this.faultMs = opts.faultMs ?? 2000;
    this.settleMs = opts.settleMs ?? 8000;
    this.nodes = this.ids.map((id) => ({
      id,
      up: false,
      epoch: 0,
      core: undefined,
      disk: new SimDisk(),
      inflight: undefined,
      timerAt: Number.POSITIVE_INFINITY,
      sm: new ClusterStateMachine(),
      incarnation: 0,
      skew: this.rng.range(-300, 300),
      seq: 0,
      pending: new Map(),
      clients: [],
      released: false,
      snapEvery: this.rng.int(5, 60),
    }));
  }

  run(): BrokerSimResult {
    try {
      for (let i = 0; i < this.nodes.length; i++) this.start(i);
      this.q.push(this.rng.range(50, 300), { k: 'fault' });
      this.q.push(100, { k: 'housekeeping' });
      this.q.push(this.faultMs, { k: 'heal' });
      for (;;) {
        const ev = this.q.pop();
        if (!ev) throw new Error('event queue ran dry');
        this.now = ev.at;
        this.handle(ev.event);
        if (this.healed && this.converged()) break;
        if (this.healed && this.now > this.healAt + this.settleMs) {
          throw new Error(`members did not converge ${this.settleMs} ms after healing: ${this.describe()}`);
        }
      }
      this.finalChecks();
      return this.result(true);
    } catch (err) {
      const kind = err instanceof ContractViolation ? 'contract' : 'error';
      return { ...this.result(false), error: `${kind}: ${(err as Error).stack ?? String(err)}` };
    }
  }

  private result(ok: boolean): BrokerSimResult {
    return {
      seed: this.opts.seed,
      ok,
      committed: this.checker.checked,
      acked: this.acked.size,
      enqueued: this.checker.enqueuedAs.size,
      acquired: this.acquired,
      crashes: this.crashes,
      simMs: Math.round(this.now),
    };
  }

  private describe(): string {
    return this.nodes
      .map(
        (n) =>
          `${n.id}:${n.up ? `${n.core!.currentRole} c=${n.core!.commitIndex} a=${n.sm.appliedIndex}` : 'down'}`,
      )
      .join(' ');
  }

  // ---- members ----

  private start(i: number): void {
    const node = this.nodes[i]!;
    node.up = true;
    node.epoch++;
    node.incarnation++;
    node.seq = 0;
    node.pending = new Map();
    node.released = false;
    const init = node.disk.load();
    const origin = (): string => processKey(node.id, String(node.incarnation));
    node.sm = new ClusterStateMachine({
      applied: (o, seq, outcome) => {
        if (o !== origin()) return;
        const p = node.pending.get(seq);
        if (!p) return;
        node.pending.delete(seq);
        p.done(outcome);
      },
    });
    if (init.snapshot) {
      node.sm.restore(init.snapshot);
      this.checkState(node, init.snapshot.index, 'restored');
    }
    node.core = new RaftCore(
      { id: node.id, members: this.ids, random: () => this.rng.next(), maxInflight: 8 },
      init,
      this.now,
    );
    node.inflight = undefined;
    node.timerAt = Number.POSITIVE_INFINITY;
    node.clients = [];
    const producers = this.rng.int(0, 2);
    const consumers = this.rng.int(0, 2);
    for (let c = 0; c < producers; c++) node.clients.push({ kind: 'producer', link: '', held: [] });
    for (let c = 0; c < consumers; c++) {
      node.clients.push({ kind: 'consumer', link: `cont${this.rng.int(1, 4)}/link`, held: [] });
    }
    node.clients.forEach((_, c) => {
      this.q.push(this.now + this.rng.range(1, 30), { k: 'client', node: i, epoch: node.epoch, client: c });
    });
    this.pump(i);
  }

  private crash(i: number): void {
    const node = this.nodes[i]!;
    if (!node.up) return;
    this.crashes++;
    node.up = false;
    node.epoch++;
    node.core = undefined;
    node.inflight = undefined;
    for (const p of node.pending.values()) p.done(undefined);
    node.pending.clear();
    node.disk.crash(this.rng);
  }

  private pump(i: number): void {
    const node = this.nodes[i]!;
    const core = node.core!;
    for (const m of core.takeEagerMessages()) this.send(m);
    if (!node.inflight && core.hasReady()) {
      const r = core.takeReady();
      node.disk.write(r.persist);
      node.inflight = r;
      this.q.push(this.now + this.rng.range(0.05, 2), { k: 'fsync', node: i, epoch: node.epoch });
    }
    const t = core.nextDeadline();
    if (t !== node.timerAt) {
      node.timerAt = t;
      this.q.push(Math.max(t, this.now), { k: 'timer', node: i, epoch: node.epoch });
      if (t < this.now) node.timerAt = this.now;
    }
  }

  private completeFsync(i: number, epoch: number): void {
    const node = this.nodes[i]!;
    if (!node.up || node.epoch !== epoch || !node.inflight) return;
    const r = node.inflight;
    node.disk.sync();
    for (const m of r.messages) this.send(m);
    if (r.restoreSnapshot) {
      node.sm.restore(r.restoreSnapshot);
      this.checkState(node, r.restoreSnapshot.index, 'installed');
    }
    for (const e of r.apply) this.applyEntry(node, e);
    if (r.truncatedFrom !== undefined || (r.softState && r.softState.role !== 'leader')) {
      // the real backend answers "outcome unknown" on a leader/term change; here: in doubt
      if (r.softState) for (const p of node.pending.values()) p.done(undefined);
      if (r.softState) node.pending.clear();
    }
    const core = node.core!;
    core.advance(r);
    node.inflight = undefined;
    if (node.sm.appliedIndex - core.log.snapshotIndex >= node.snapEvery) {
      core.compact(node.sm.appliedIndex, node.sm.snapshot());
    }
    this.pump(i);
  }

  private applyEntry(node: SimNode, e: Entry): void {
    const next = this.checker.checked + 1;
    let event: BrokerEvent | undefined;
    let kind = 'noop';
    let outcome: EntryOutcome | undefined;
    if (e.index === next && e.data !== null) {
      const entry = decodeEntry(e.data);
      kind = entry.body.kind;
      if (entry.body.kind === 'event') event = decodeEvent(entry.body.event);
    }
    // watch what this apply did (for the contract checker) without a second state machine
    const sm = node.sm as unknown as { hooks: { applied?: (o: string, s: number, r: EntryOutcome) => void } };
    const inner = sm.hooks.applied;
    sm.hooks.applied = (o, s, r) => {
      outcome = r;
      inner?.(o, s, r);
    };
    if (this.opts.bug === 'local-clock' && e.data !== null && e.data[0] === 1) {
      node.sm.apply({ ...e, data: stampEntry(e.data, this.leaderTime(this.nodes.indexOf(node))) });
    } else node.sm.apply(e);
    sm.hooks.applied = inner;
    if (e.index === next) {
      if (outcome) {
        this.checker.onResult(e.index, event, kind, outcome, node.sm.state.now);
        if (outcome.ok && outcome.result.type === 'acquire') this.acquired += outcome.result.messages.length;
      } else this.checker.checked = e.index;
    } else if (e.index > next) {
      throw new ContractViolation(`index ${e.index} applied before anyone applied ${next}`);
    }
    this.checkState(node, e.index, 'applied');
  }

  /** Members at the same index hold byte-identical snapshots. */
  private checkState(node: SimNode, index: number, how: string): void {
    const h = hashOf(node.sm.snapshot());
    const seen = this.stateAt.get(index);
    if (seen === undefined) this.stateAt.set(index, h);
    else if (seen !== h)
      throw new ContractViolation(`${node.id} ${how} index ${index}: state differs from another member's`);
  }

  // ---- requests (what ClusterBackend does, in simulation) ----

  private submit(i: number, body: EntryBody, done: (o: EntryOutcome | undefined) => void): void {
    const node = this.nodes[i]!;
    const seq = ++node.seq;
    const request = encodeEntry(processKey(node.id, String(node.incarnation)), seq, body);
    node.pending.set(seq, { done, deadline: this.now + 500 });
    const core = node.core!;
    if (core.isLeader()) this.proposeAt(i, request);
    else if (core.leaderId !== null) {
      const to = this.ids.indexOf(core.leaderId);
      if (this.conn[i]![to] && !this.rng.chance(this.loss)) {
        this.q.push(this.now + this.rng.range(0.1, this.delayMax), { k: 'forward', to, request });
      }
    }
  }

  private proposeAt(i: number, request: Uint8Array): void {
    const node = this.nodes[i]!;
    if (!node.up || !node.core!.isLeader()) return;
    node.core!.propose(stampEntry(request, this.now + node.skew + 1_000_000), this.now);
    if (this.opts.bug === 'ack-on-append') this.ackEarly(request);
    this.pump(i);
  }

  /** The 'ack-on-append' bug: answer the origin's pending enqueue as if it had committed. */
  private ackEarly(request: Uint8Array): void {
    const entry = decodeEntry(request);
    if (entry.body.kind !== 'event') return;
    const ev = decodeEvent(entry.body.event);
    if (ev.type !== 'enqueue') return;
    for (const n of this.nodes) {
      if (processKey(n.id, String(n.incarnation)) !== entry.origin) continue;
      const p = n.pending.get(entry.seq);
      n.pending.delete(entry.seq);
      p?.done({ ok: true, result: { type: 'enqueue', status: 'enqueued', seq: -1 } });
    }
  }

  private event(i: number, e: BrokerEvent, done: (o: EntryOutcome | undefined) => void): void {
    this.submit(i, { kind: 'event', event: encodeEvent(e) }, done);
  }

  private leaderTime(i: number): number {
    return this.now + this.nodes[i]!.skew + 1_000_000;
  }

  private clientStep(i: number, c: number): void {
    const node = this.nodes[i]!;
    const client = node.clients[c]!;
    const again = (ms: number): void => {
      if (!this.healed || this.rng.chance(0.3)) {
        this.q.push(this.now + ms, { k: 'client', node: i, epoch: node.epoch, client: c });
      }
    };
    const epoch = node.epoch;
    const alive = (): boolean => node.up && node.epoch === epoch;
    if (!node.released) {
      // like ServingWatch: release consumers of earlier incarnations before serving
      if (node.core!.leaderId !== null && c === 0) {
        this.submit(i, { kind: 'release-owner', member: node.id, keep: String(node.incarnation) }, (o) => {
          if (o && alive()) node.released = true;
        });
      }
      again(20);
      return;
    }
    const proc = processKey(node.id, String(node.incarnation));
    if (!this.declared) {
      this.event(i, { type: 'declare', leaderTime: this.leaderTime(i), queue: QUEUE, options: {} }, (o) => {
        if (o) this.declared = true;
      });
      again(10);
      return;
    }
    if (client.kind === 'producer') {
      const resend = this.inDoubt.length > 0 && this.rng.chance(0.3);
      const key = resend ? this.inDoubt.shift()! : `s:k${++this.keys}`;
      const ev: BrokerEvent = {
        type: 'enqueue',
        leaderTime: this.leaderTime(i),
        queue: QUEUE,
        message: new Uint8Array([1, 2, 3, this.keys & 0xff]),
        dedupKey: key,
      };
      if (!resend && this.rng.chance(0.05)) {
        ev.expiresAt = ev.leaderTime + this.rng.int(5, 200);
        this.withTtl.add(key);
      }
      this.event(i, ev, (o) => {
        if (o?.ok && o.result.type === 'enqueue' && o.result.status !== 'refused') this.acked.add(key);
        else if (!o) this.inDoubt.push(key);
      });
      again(this.rng.range(2, 25));
      return;
    }
    const consumer = qualifyConsumer(proc, client.link);
    const r = this.rng.next();
    if (client.held.length > 0 && r < 0.6) {
      const seqs = client.held.splice(0, this.rng.int(1, client.held.length));
      const outcome: SettleOutcome = this.rng.pick<SettleOutcome>([
        { type: 'accepted' },
        { type: 'accepted' },
        { type: 'accepted' },
        { type: 'released' },
        { type: 'modified', deliveryFailed: true },
        { type: 'modified', undeliverableHere: true },
        { type: 'rejected' },
      ]);
      this.event(
        i,
        { type: 'settle', leaderTime: this.leaderTime(i), consumer, seqs, outcome, link: client.link },
        () => {},
      );
    } else if (r < 0.63) {
      client.held = [];
      this.event(i, { type: 'release-consumer', leaderTime: this.leaderTime(i), consumer }, () => {});
    } else if (r < 0.66) {
      // the link re-attaches here: claim it from a predecessor anywhere
      this.submit(i, { kind: 'claim', link: linkKeyOf(consumer), claimant: consumer }, () => {});
    } else {
      this.event(
        i,
        {
          type: 'acquire',
          leaderTime: this.leaderTime(i),
          queue: QUEUE,
          consumer,
          max: this.rng.int(1, 3),
          link: client.link,
        },
        (o) => {
          if (alive() && o?.ok && o.result.type === 'acquire')
            for (const m of o.result.messages) client.held.push(m.seq);
        },
      );
    }
    again(this.rng.range(2, 30));
  }

  private housekeeping(): void {
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i]!;
      if (!node.up) continue;
      for (const [seq, p] of node.pending) {
        if (p.deadline <= this.now) {
          node.pending.delete(seq);
          p.done(undefined);
        }
      }
      if (node.core!.isLeader() && this.rng.chance(0.5)) {
        this.event(i, { type: 'expire', leaderTime: this.leaderTime(i) }, () => {});
      }
    }
    this.q.push(this.now + 100, { k: 'housekeeping' });
  }

  // ---- network and faults ----

  private send(m: Message): void {
    const from = this.ids.indexOf(m.from);
    const to = this.ids.indexOf(m.to);
    if (!this.conn[from]![to] || this.rng.chance(this.loss)) return;
    this.q.push(this.now + this.rng.range(0.1, this.delayMax), { k: 'deliver', msg: m });
    if (this.rng.chance(this.dup))
      this.q.push(this.now + this.rng.range(0.1, this.delayMax * 3), { k: 'deliver', msg: m });
  }

  private handle(ev: Ev): void {
    switch (ev.k) {
      case 'deliver': {
        const i = this.ids.indexOf(ev.msg.to);
        const node = this.nodes[i]!;
        if (!node.up) return;
        node.core!.step(ev.msg, this.now);
        this.pump(i);
        return;
      }
      case 'forward':
        this.proposeAt(ev.to, ev.request);
        return;
      case 'timer': {
        const node = this.nodes[ev.node]!;
        if (!node.up || node.epoch !== ev.epoch || node.timerAt !== this.now) return;
        node.timerAt = Number.POSITIVE_INFINITY;
        node.core!.tick(this.now);
        this.pump(ev.node);
        return;
      }
      case 'fsync':
        this.completeFsync(ev.node, ev.epoch);
        return;
      case 'client': {
        const node = this.nodes[ev.node]!;
        if (!node.up || node.epoch !== ev.epoch) return;
        this.clientStep(ev.node, ev.client);
        return;
      }
      case 'housekeeping':
        this.housekeeping();
        return;
      case 'fault':
        if (this.healed) return;
        this.fault();
        this.q.push(this.now + this.rng.range(20, 300), { k: 'fault' });
        return;
      case 'heal':
        this.healed = true;
        this.healAt = this.now;
        this.conn = this.ids.map(() => this.ids.map(() => true));
        this.loss = 0;
        this.dup = 0;
        this.delayMax = 3;
        for (let i = 0; i < this.nodes.length; i++) if (!this.nodes[i]!.up) this.start(i);
        return;
    }
  }

  private fault(): void {
    const n = this.nodes.length;
    const r = this.rng.next();
    if (r < 0.3) {
      const order = this.rng.shuffle([...Array(n).keys()]);
      const cut = this.rng.int(0, n - 1);
      for (let a = 0; a < n; a++)
        for (let b = 0; b < n; b++) this.conn[order[a]!]![order[b]!] = a < cut === b < cut || cut === 0;
    } else if (r < 0.45) {
      const up = this.nodes.map((x, i) => (x.up ? i : -1)).filter((i) => i >= 0);
      if (up.length > 0) this.crash(this.rng.pick(up));
    } else if (r < 0.7) {
      const down = this.nodes.map((x, i) => (x.up ? -1 : i)).filter((i) => i >= 0);
      if (down.length > 0) this.start(this.rng.pick(down));
    } else if (r < 0.8) {
      this.loss = this.rng.pick([0, 0.01, 0.05, 0.2]);
      this.dup = this.rng.pick([0, 0.01, 0.05]);
      this.delayMax = this.rng.pick([1, 3, 10, 40]);
    }
  }

  // ---- the end ----

  /** Every member up, one commit index, everything applied, and nothing in flight. */
  private converged(): boolean {
    const nodes = this.nodes;
    if (!nodes.every((n) => n.up && !n.inflight)) return false;
    const leader = nodes.find((n) => n.core!.isLeader());
    if (!leader || leader.core!.commitIndex !== leader.core!.log.lastIndex()) return false;
    const target = leader.core!.commitIndex;
    if (target < 1) return false;
    return nodes.every((n) => n.sm.appliedIndex === target && n.pending.size === 0);
  }

  private finalChecks(): void {
    const states = this.nodes.map((n) => hashOf(n.sm.snapshot()));
    if (new Set(states).size !== 1)
      throw new ContractViolation(`members ended with different states: ${this.describe()}`);
    const state = this.nodes[0]!.sm.state;
    const present = new Set<number>();
    for (const q of state.listQueues()) for (const m of state.browse(q.name)) present.add(m.seq);
    for (const key of this.acked) {
      const seq = this.checker.enqueuedAs.get(key);
      if (seq === undefined) throw new ContractViolation(`acknowledged ${key} was never enqueued`);
      if (present.has(seq) || this.checker.removed.has(seq) || this.withTtl.has(key)) continue;
      throw new ContractViolation(`acknowledged ${key} (seq ${seq}) lost`);
    }
  }
}

export function runBrokerSim(opts: BrokerSimOptions): BrokerSimResult {
  return new BrokerSimulation(opts).run();
}
