/**
 * The simulation's faults: partitions of every shape, crashes, restarts with damaged stores,
 * stalls, link quality, leaders cut off (churn and the figure-8 schedule's partitions), and the
 * heal that ends the fault phase.
 */
import type { Figure8Host } from './figure8.js';
import type { SimMember } from './sim-member.js';
import { SimulationHost } from './simulation-host.js';

export abstract class SimulationFaults extends SimulationHost {
  protected figure8Host(): Figure8Host {
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

  protected crash(i: number): void {
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

  // ---- faults ------------------------------------------------------------------------------

  private setAll(v: boolean): void {
    this.conn = this.ids.map(() => this.ids.map(() => v));
  }

  protected link(a: number, b: number, v = true): void {
    this.conn[a]![b] = v;
    this.conn[b]![a] = v;
  }

  protected async fault(): Promise<void> {
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

  protected deposeLater(member: SimMember, ms: number): void {
    if (this.healed) return;
    const term = member.replica!.term;
    this.q.push(this.clock + ms, { k: 'depose', node: member.index, epoch: member.epoch, term });
  }

  /**
   * Cut the leader off for a while: short reigns leave logs whose suffixes come from different
   * terms, the ground an unsafe commit rule needs to lose an entry (Raft figure 8).
   */
  protected depose(node: SimMember): void {
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

  protected describeConn(): string {
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
  protected async heal(): Promise<void> {
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
