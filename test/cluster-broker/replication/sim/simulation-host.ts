/**
 * What the members see of the simulation (SimHost): its clock, its timers and syncs, its network,
 * and the hooks that count elections and applied entries (the liveness probe) and cut leaders
 * off on churn seeds.
 */
import type { Entry, Message } from '../../../../src/cluster-broker/replication/raft/types.js';
import { amqpWireCodec } from '../../../../src/cluster-broker/replication/wire.js';
import { payloadKey } from './checker.js';
import type { SimMember } from './sim-member.js';
import { SimulationFields } from './simulation-fields.js';

export abstract class SimulationHost extends SimulationFields {
  protected abstract crash(i: number): void;
  protected abstract deposeLater(member: SimMember, ms: number): void;

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
}
