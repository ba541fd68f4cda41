/**
 * The ReplicaPort a simulated member gives its ClusterBackend: the member's RaftCore, whose Ready
 * loop the simulation runs (broker-sim-members.ts). As with Replica's `append`, nothing waits on an
 * appended entry here: the backend learns its fate from the member's apply, its role changes and
 * its deadlines, which the simulation drives at the same points of the loop as Replica's
 * (src/cluster-broker/replication/replica-ready.ts, `handle`).
 */
import type { ReplicaPort } from '../../../../src/cluster-broker/cluster/cluster-backend.js';
import { NotLeaderError } from '../../../../src/cluster-broker/replication/errors.js';
import type { RaftCore } from '../../../../src/cluster-broker/replication/raft/core.js';

export class SimReplicaPort implements ReplicaPort {
  /** `proposed` runs the member's loop after a proposal (Replica's kick). */
  constructor(
    private readonly core: RaftCore,
    private readonly now: () => number,
    private readonly proposed: () => void,
  ) {}

  isLeader(): boolean {
    return this.core.isLeader();
  }

  get leaderId(): string | null {
    return this.core.leaderId;
  }

  get term(): number {
    return this.core.currentTerm;
  }

  /** Throws NotLeaderError at once on a follower, as Replica's does. */
  append(data: Uint8Array): { index: number; term: number } {
    if (!this.core.isLeader()) throw new NotLeaderError(this.core.leaderId);
    const at = this.core.propose(data, this.now());
    this.proposed();
    return at;
  }
}
