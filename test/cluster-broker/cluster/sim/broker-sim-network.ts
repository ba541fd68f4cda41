/**
 * The broker simulation's network (Raft messages and the backends' forwards alike) and its faults:
 * partitions, crashes and restarts, loss, delay and duplication.
 */
import { type AppMessage, encodeApp } from '../../../../src/cluster-broker/cluster/peer-wire.js';
import type { Message } from '../../../../src/cluster-broker/replication/raft/types.js';
import { BrokerSimulationFields } from './broker-sim-fields.js';
import type { Ev } from './broker-sim-types.js';

export abstract class BrokerSimNetwork extends BrokerSimulationFields {
  protected abstract start(i: number): void;
  protected abstract crash(i: number): void;

  // ---- network and faults ----

  /** One message on the network: dropped across a partition or by loss, maybe delayed, duplicated. */
  private transmit(from: number, to: number, ev: Ev): void {
    if (!this.conn[from]![to] || this.rng.chance(this.loss)) return;
    this.q.push(this.now + this.rng.range(0.1, this.delayMax), ev);
    if (this.rng.chance(this.dup)) this.q.push(this.now + this.rng.range(0.1, this.delayMax * 3), ev);
  }

  protected send(m: Message): void {
    this.transmit(this.ids.indexOf(m.from), this.ids.indexOf(m.to), { k: 'deliver', msg: m });
  }

  /** The backend's AppSender: false (nothing sent) when the peer is cut off or down. */
  protected sendApp(from: number, m: AppMessage): boolean {
    const to = this.ids.indexOf(m.to);
    if (!this.conn[from]![to] || !this.nodes[to]!.up) return false;
    this.transmit(from, to, { k: 'app', to, bytes: encodeApp(m) });
    return true;
  }

  protected fault(): void {
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
}
