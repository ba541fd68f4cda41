/**
 * The broker simulation's members: a start wires the real ClusterBackend, ClusterStateMachine and
 * RaftCore as member.ts does; a crash loses what was not synced; each Ready is persisted, then
 * sent, applied and checked (same index, byte-identical state; the delivery contract).
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
import { decodeEvent } from '../../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../../src/cluster-broker/core/events.js';
import { RaftCore } from '../../../../src/cluster-broker/replication/raft/core.js';
import type { Entry } from '../../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../../src/cluster-broker/replication/raft/types.js';
import { BrokerSimNetwork } from './broker-sim-network.js';
import type { BrokerSimOptions, SimNode } from './broker-sim-types.js';
import { ContractViolation } from './contract-checker.js';
import { SimReplicaPort } from './sim-replica-port.js';

/** A request not applied within this is answered "outcome unknown" (simulated ms). */
const SUBMIT_TIMEOUT_MS = 500;

const UNSAFE: Record<NonNullable<BrokerSimOptions['bug']>, BackendUnsafeFlags> = {
  'local-clock': {},
  'ack-on-append': { ackOnAppend: true },
  'skip-origin-check': { skipOriginCheck: true },
};

export function hashOf(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

export abstract class BrokerSimMembers extends BrokerSimNetwork {
  // ---- members ----

  private leaderTime(i: number): number {
    return this.now + this.nodes[i]!.skew + 1_000_000;
  }

  protected start(i: number): void {
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

  protected crash(i: number): void {
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

  protected pump(i: number): void {
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
  protected completeFsync(i: number, epoch: number): void {
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
}
