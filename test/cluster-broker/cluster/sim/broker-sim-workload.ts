/**
 * The broker simulation's workload: each member's clients (sim-clients.ts) once it serves, the
 * release of earlier incarnations' consumers before that, and the leader's housekeeping.
 */
import { encodeEvent } from '../../../../src/cluster-broker/core/event-codec.js';
import { BrokerSimMembers } from './broker-sim-members.js';

export abstract class BrokerSimWorkload extends BrokerSimMembers {
  // ---- clients ----

  protected clientStep(i: number, c: number): void {
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
  protected housekeeping(): void {
    for (const node of this.nodes) {
      if (!node.up || !node.core!.isLeader() || !this.rng.chance(0.5)) continue;
      const backend = node.backend!;
      backend
        .request({ kind: 'event', event: encodeEvent({ type: 'expire', leaderTime: backend.now() }) })
        .catch(() => {});
    }
    this.q.push(this.now + 100, { k: 'housekeeping' });
  }
}
