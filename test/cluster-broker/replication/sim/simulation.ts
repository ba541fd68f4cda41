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

import { SafetyViolation } from './checker.js';
import { describe } from './describe.js';
import { SimulationFaults } from './simulation-faults.js';
import type { SimEvent, SimOptions, SimResult } from './simulation-types.js';

export type { SimOptions, SimResult } from './simulation-types.js';

class LivenessViolation extends Error {}

/** Normal runs keep a few thousand events pending at most. */
const MAX_PENDING_EVENTS = 100_000;

/** Every microtask queued so far, and every one those queue, has run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class Simulation extends SimulationFaults {
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
}

export async function runSeed(opts: SimOptions): Promise<SimResult> {
  const r = await new Simulation(opts).run();
  if (!r.ok && !opts.trace) {
    // replay the same seed with the trace on: the run is deterministic, so it fails the same way
    return new Simulation({ ...opts, trace: 200 }).run();
  }
  return r;
}
