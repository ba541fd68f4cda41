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
import { decodeApp } from '../../../../src/cluster-broker/cluster/peer-wire.js';
import { snapshotBytes } from '../../../../src/cluster-broker/replication/raft/types.js';
import { hashOf } from './broker-sim-members.js';
import type { BrokerSimOptions, BrokerSimResult, Ev } from './broker-sim-types.js';
import { BrokerSimWorkload } from './broker-sim-workload.js';
import { ContractViolation } from './contract-checker.js';

export type { BrokerSimOptions, BrokerSimResult } from './broker-sim-types.js';

/** Lets every promise callback of this step run (nothing else is pending: no real I/O, no timers). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class BrokerSimulation extends BrokerSimWorkload {
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
