/**
 * Deterministic simulation of cluster members running the broker's real code: on every member
 * the real ClusterBackend (requests `[origin][seq][event]`, forward to the leader, resolve on
 * this member's own apply, outcome unknown on a leader/term change or the deadline, claims and
 * consumer keys) over a ReplicaPort of the real RaftCore (sim-replica-port.ts), the real
 * ClusterStateMachine (BrokerState + cluster entries) and the real entry and peer-wire codecs.
 * Wired as src/cluster-broker/assembly/member.ts wires them: the state machine's hooks call the
 * backend, role changes reach `onRole`, a follower's request travels to the leader as a
 * `forward` AppMessage on the simulated network and reaches `onForward` there. The backend's
 * clock is the member's (skewed) simulated clock and its timers are simulated events.
 *
 * Faults: seeded network (partitions, loss, delay, duplication, for Raft and forward messages
 * alike), disks that lose unsynced writes, crashes and restarts (new incarnations,
 * release-owner), clock skew between leaders. Clients on every member submit through
 * `backend.submit()` (sim-clients.ts) and count an enqueue acknowledged only when it resolves.
 *
 * Checked on every step: members that applied the same index hold byte-identical snapshots;
 * the delivery contract on the committed results (ContractChecker); a submit resolves with a
 * result of its own event's type and rejects only with "outcome unknown". At the end (network
 * healed, everyone up): every member converges on one state and no acknowledged message is lost.
 */
import { createHash } from 'node:crypto';
import {
  type BackendTimers,
  type BackendUnsafeFlags,
  ClusterBackend,
} from '../../../../src/cluster-broker/cluster/cluster-backend.js';
import {
  ClusterStateMachine,
  type EntryOutcome,
} from '../../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../../src/cluster-broker/cluster/consumer-keys.js';
import { decodeEntry, stampEntry } from '../../../../src/cluster-broker/cluster/entry-codec.js';
import { type AppMessage, decodeApp, encodeApp } from '../../../../src/cluster-broker/cluster/peer-wire.js';
import { decodeEvent, encodeEvent } from '../../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../../src/cluster-broker/core/events.js';
import { RaftCore } from '../../../../src/cluster-broker/replication/raft/core.js';
import type { Entry, Message, Ready } from '../../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../../src/cluster-broker/replication/raft/types.js';
import { EventQueue } from '../../replication/sim/event-queue.js';
import { Rng } from '../../replication/sim/rng.js';
import { SimDisk } from '../../replication/sim/sim-disk.js';
import { ContractChecker, ContractViolation } from './contract-checker.js';
import { type Client, SimClients } from './sim-clients.js';
import { SimReplicaPort } from './sim-replica-port.js';

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
   * - 'ack-on-append': the backend answers an enqueue once its leader appended it, not at commit
   *   + apply (BackendUnsafeFlags.ackOnAppend);
   * - 'skip-origin-check': the backend settles a request on any applied entry with its number,
   *   whatever its origin (BackendUnsafeFlags.skipOriginCheck).
   */
  bug?: 'local-clock' | 'ack-on-append' | 'skip-origin-check';
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
  | { k: 'app'; to: number; bytes: Uint8Array }
  | { k: 'timer'; node: number; epoch: number }
  | { k: 'backend-timer'; node: number; epoch: number; id: number }
  | { k: 'fsync'; node: number; epoch: number }
  | { k: 'client'; node: number; epoch: number; client: number }
  | { k: 'housekeeping' }
  | { k: 'fault' }
  | { k: 'heal' };

/** One member process: everything but `disk` and `skew` is new at each start. */
interface SimNode {
  id: string;
  up: boolean;
  epoch: number;
  core: RaftCore | undefined;
  port: SimReplicaPort | undefined;
  backend: ClusterBackend | undefined;
  /** The backend's armed timers, by id. */
  timers: Map<number, () => void>;
  disk: SimDisk;
  inflight: Ready | undefined;
  timerAt: number;
  sm: ClusterStateMachine;
  /** What the entry being applied did (the state machine's `applied` hook). */
  outcome: EntryOutcome | undefined;
  incarnation: number;
  skew: number;
  clients: Client[];
  releasing: boolean;
  snapEvery: number;
}

/** A request not applied within this is answered "outcome unknown" (simulated ms). */
const SUBMIT_TIMEOUT_MS = 500;

const UNSAFE: Record<NonNullable<BrokerSimOptions['bug']>, BackendUnsafeFlags> = {
  'local-clock': {},
  'ack-on-append': { ackOnAppend: true },
  'skip-origin-check': { skipOriginCheck: true },
};

function hashOf(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

/** Lets every promise callback of this step run (nothing else is pending: no real I/O, no timers). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class BrokerSimulation {
  private readonly rng: Rng;
  private readonly q = new EventQueue<Ev>();
  private readonly nodes: SimNode[];
  private readonly ids: string[];
  private readonly checker = new ContractChecker();
  /** index -> hash of the state snapshot after applying it (first member to apply it). */
  private readonly stateAt = new Map<number, string>();
  private readonly clients: SimClients;
  private conn: boolean[][];
  private loss = 0;
  private dup = 0;
  private delayMax = 3;
  private now = 0;
  private healed = false;
  private healAt = 0;
  private acquired = 0;
  private crashes = 0;
  private timerIds = 0;
  private readonly faultMs: number;
  private readonly settleMs: number;

  constructor(private readonly opts: BrokerSimOptions) {
    this.rng = new Rng(opts.seed);
    this.clients = new SimClients(this.rng);
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
      port: undefined,
      backend: undefined,
      timers: new Map(),
      disk: new SimDisk(),
      inflight: undefined,
      timerAt: Number.POSITIVE_INFINITY,
      sm: new ClusterStateMachine(),
      outcome: undefined,
      incarnation: 0,
      skew: this.rng.range(-300, 300),
      clients: [],
      releasing: false,
      snapEvery: this.rng.int(5, 60),
    }));
  }

  async run(): Promise<BrokerSimResult> {
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
        // Raft-only steps settle no promise; after any other, the callbacks run before time moves
        if (ev.event.k !== 'deliver' && ev.event.k !== 'timer') await settle();
        if (this.clients.violation) throw this.clients.violation;
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
    } finally {
      for (const node of this.nodes) node.backend?.close();
      await settle();
    }
  }

  private result(ok: boolean): BrokerSimResult {
    return {
      seed: this.opts.seed,
      ok,
      committed: this.checker.checked,
      acked: this.clients.acked.size,
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
          `${n.id}:${n.up ? `${n.core!.currentRole} c=${n.core!.commitIndex} a=${n.sm.appliedIndex} p=${n.backend!.pendingCount}` : 'down'}`,
      )
      .join(' ');
  }

  // ---- members ----

  private start(i: number): void {
    const node = this.nodes[i]!;
    node.up = true;
    node.epoch++;
    node.incarnation++;
    node.releasing = false;
    const epoch = node.epoch;
    const timers: BackendTimers = {
      set: (fn, ms) => {
        const id = ++this.timerIds;
        node.timers.set(id, fn);
        this.q.push(this.now + ms, { k: 'backend-timer', node: i, epoch, id });
        return id;
      },
      clear: (id) => {
        node.timers.delete(id as number);
      },
    };
    node.timers = new Map();
    const backend = new ClusterBackend({
      memberId: node.id,
      origin: processKey(node.id, String(node.incarnation)),
      submitTimeoutMs: SUBMIT_TIMEOUT_MS,
      clock: () => this.leaderTime(i),
      timers,
      unsafe: this.opts.bug ? UNSAFE[this.opts.bug] : {},
    });
    // as member.ts: the state machine's hooks call the backend
    node.sm = new ClusterStateMachine({
      applied: (origin, seq, outcome) => {
        node.outcome = outcome;
        backend.onApplied(origin, seq, outcome);
      },
      claimed: (link, claimant) => backend.onClaimed(link, claimant),
    });
    const init = node.disk.load();
    if (init.snapshot) {
      node.sm.restore(init.snapshot);
      this.checkState(node, init.snapshot.index, 'restored');
    }
    const core = new RaftCore(
      { id: node.id, members: this.ids, random: () => this.rng.next(), maxInflight: 8 },
      init,
      this.now,
    );
    node.core = core;
    node.port = new SimReplicaPort(
      core,
      () => this.now,
      () => this.pump(i),
    );
    backend.attach(node.sm, node.port, (m) => this.sendApp(i, m));
    // the server detaches a stolen link (amqp:link:stolen): what it held went back with the claim
    backend.on('stolen', (link) => {
      for (const c of node.clients) if (c.link === link) c.held = [];
    });
    node.backend = backend;
    node.inflight = undefined;
    node.timerAt = Number.POSITIVE_INFINITY;
    node.clients = this.clients.newClients();
    node.clients.forEach((_, c) => {
      this.q.push(this.now + this.rng.range(1, 30), { k: 'client', node: i, epoch, client: c });
    });
    this.pump(i);
  }

  private crash(i: number): void {
    const node = this.nodes[i]!;
    if (!node.up) return;
    this.crashes++;
    node.up = false;
    node.epoch++;
    // the process is gone: its clients' requests have an unknown outcome (they may still commit)
    node.backend!.close();
    node.timers.clear();
    node.core = undefined;
    node.port = undefined;
    node.inflight = undefined;
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

  /** The Ready's writes are durable: the rest of it, in Replica's order (replica-ready.ts, `handle`). */
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
    if (r.softState) node.backend!.onRole(r.softState);
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
    if (e.index === next && e.data !== null) {
      const entry = decodeEntry(e.data);
      kind = entry.body.kind;
      if (entry.body.kind === 'event') event = decodeEvent(entry.body.event);
    }
    node.outcome = undefined;
    if (this.opts.bug === 'local-clock' && e.data !== null && e.data[0] === 1) {
      node.sm.apply({ ...e, data: stampEntry(e.data, this.leaderTime(this.nodes.indexOf(node))) });
    } else node.sm.apply(e);
    const outcome = node.outcome as EntryOutcome | undefined;
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
    const h = hashOf(snapshotBytes(node.sm.snapshot()));
    const seen = this.stateAt.get(index);
    if (seen === undefined) this.stateAt.set(index, h);
    else if (seen !== h)
      throw new ContractViolation(`${node.id} ${how} index ${index}: state differs from another member's`);
  }

  // ---- clients ----

  private leaderTime(i: number): number {
    return this.now + this.nodes[i]!.skew + 1_000_000;
  }

  private clientStep(i: number, c: number): void {
    const node = this.nodes[i]!;
    const backend = node.backend!;
    const epoch = node.epoch;
    const again = (ms: number): void => {
      if (!this.healed || this.rng.chance(0.3)) {
        this.q.push(this.now + ms, { k: 'client', node: i, epoch, client: c });
      }
    };
    if (backend.serving) {
      again(this.clients.step(backend, node.clients[c]!, () => node.up && node.epoch === epoch));
      return;
    }
    // like ServingWatch: release consumers of earlier incarnations before serving
    if (node.core!.leaderId !== null && c === 0 && !node.releasing) {
      node.releasing = true;
      backend
        .request({ kind: 'release-owner', member: node.id, keep: String(node.incarnation) })
        .then(
          () => backend.setServing(true),
          () => {},
        )
        .finally(() => {
          node.releasing = false;
        });
    }
    again(20);
  }

  /** Like member.ts's housekeeping: the leader submits time-driven expiry. */
  private housekeeping(): void {
    for (const node of this.nodes) {
      if (!node.up || !node.core!.isLeader() || !this.rng.chance(0.5)) continue;
      const backend = node.backend!;
      backend
        .request({ kind: 'event', event: encodeEvent({ type: 'expire', leaderTime: backend.now() }) })
        .catch(() => {});
    }
    this.q.push(this.now + 100, { k: 'housekeeping' });
  }

  // ---- network and faults ----

  /** One message on the network: dropped across a partition or by loss, maybe delayed, duplicated. */
  private transmit(from: number, to: number, ev: Ev): void {
    if (!this.conn[from]![to] || this.rng.chance(this.loss)) return;
    this.q.push(this.now + this.rng.range(0.1, this.delayMax), ev);
    if (this.rng.chance(this.dup)) this.q.push(this.now + this.rng.range(0.1, this.delayMax * 3), ev);
  }

  private send(m: Message): void {
    this.transmit(this.ids.indexOf(m.from), this.ids.indexOf(m.to), { k: 'deliver', msg: m });
  }

  /** The backend's AppSender: false (nothing sent) when the peer is cut off or down. */
  private sendApp(from: number, m: AppMessage): boolean {
    const to = this.ids.indexOf(m.to);
    if (!this.conn[from]![to] || !this.nodes[to]!.up) return false;
    this.transmit(from, to, { k: 'app', to, bytes: encodeApp(m) });
    return true;
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
      case 'app': {
        const node = this.nodes[ev.to]!;
        if (!node.up) return;
        // as member.ts's onApp (each delivery decodes its own copy, as off the wire)
        const m = decodeApp(ev.bytes);
        if (m.to === node.id && m.kind === 'forward') node.backend!.onForward(m.request);
        return;
      }
      case 'timer': {
        const node = this.nodes[ev.node]!;
        if (!node.up || node.epoch !== ev.epoch || node.timerAt !== this.now) return;
        node.timerAt = Number.POSITIVE_INFINITY;
        node.core!.tick(this.now);
        this.pump(ev.node);
        return;
      }
      case 'backend-timer': {
        const node = this.nodes[ev.node]!;
        const fn = node.timers.get(ev.id);
        if (!node.up || node.epoch !== ev.epoch || !fn) return;
        node.timers.delete(ev.id);
        fn();
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
    return nodes.every((n) => n.sm.appliedIndex === target && n.backend!.pendingCount === 0);
  }

  private finalChecks(): void {
    const states = this.nodes.map((n) => hashOf(snapshotBytes(n.sm.snapshot())));
    if (new Set(states).size !== 1)
      throw new ContractViolation(`members ended with different states: ${this.describe()}`);
    const state = this.nodes[0]!.sm.state;
    const present = new Set<number>();
    for (const q of state.listQueues()) for (const m of state.browse(q.name)) present.add(m.seq);
    for (const key of this.clients.acked) {
      const seq = this.checker.enqueuedAs.get(key);
      if (seq === undefined) throw new ContractViolation(`acknowledged ${key} was never enqueued`);
      if (present.has(seq) || this.checker.removed.has(seq) || this.clients.withTtl.has(key)) continue;
      throw new ContractViolation(`acknowledged ${key} (seq ${seq}) lost`);
    }
  }
}

export function runBrokerSim(opts: BrokerSimOptions): Promise<BrokerSimResult> {
  return new BrokerSimulation(opts).run();
}
