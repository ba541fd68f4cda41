/**
 * The ReplicaPort a simulated member gives its ClusterBackend: the member's RaftCore, whose Ready
 * loop the simulation runs (broker-sim.ts). A proposal resolves once its entry is committed and
 * applied here and fails when its outcome becomes unknown, at the same points of the loop as
 * Replica's (src/cluster-broker/replication/replica.ts, `handle`): a snapshot installed over it,
 * its index overwritten by a new leader, this member's leadership lost, the member gone.
 */
import type { ReplicaPort } from '../../../../src/cluster-broker/cluster/cluster-backend.js';
import { NotLeaderError, ProposalOutcomeError } from '../../../../src/cluster-broker/replication/errors.js';
import type { RaftCore } from '../../../../src/cluster-broker/replication/raft/core.js';
import type { Entry, Role, SoftState } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { Committed } from '../../../../src/cluster-broker/replication/replica.js';

interface Proposal {
  term: number;
  resolve: (c: Committed) => void;
  reject: (e: Error) => void;
}

export class SimReplicaPort implements ReplicaPort {
  private readonly proposals = new Map<number, Proposal>();
  private role: Role = 'follower';

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

  /** Rejects (NotLeaderError) at once on a follower, as Replica's does. */
  propose(data: Uint8Array): Promise<Committed> {
    if (!this.core.isLeader()) return Promise.reject(new NotLeaderError(this.core.leaderId));
    return new Promise<Committed>((resolve, reject) => {
      const at = this.core.propose(data, this.now()); // a throw rejects the promise
      this.proposals.set(at.index, { term: at.term, resolve, reject });
      this.proposed();
    });
  }

  /** The state machine applied `e` (after the member's state machine, as in Replica). */
  applied(e: Entry): void {
    const p = this.proposals.get(e.index);
    if (!p) return;
    this.proposals.delete(e.index);
    if (p.term === e.term) p.resolve({ index: e.index, term: e.term });
    else p.reject(new ProposalOutcomeError(e.index, p.term, true, `index ${e.index} holds term ${e.term}`));
  }

  snapshotInstalled(index: number): void {
    for (const [i, p] of this.proposals) {
      if (i > index) continue;
      this.proposals.delete(i);
      p.reject(new ProposalOutcomeError(i, p.term, false, 'replaced by a snapshot'));
    }
  }

  truncated(from: number): void {
    for (const [i, p] of this.proposals) {
      if (i < from) continue;
      this.proposals.delete(i);
      p.reject(new ProposalOutcomeError(i, p.term, true, 'overwritten by a new leader'));
    }
  }

  roleChanged(s: SoftState): void {
    if (this.role === 'leader' && s.role !== 'leader') this.failAll('leadership lost');
    this.role = s.role;
  }

  failAll(reason: string): void {
    for (const [i, p] of this.proposals) p.reject(new ProposalOutcomeError(i, p.term, false, reason));
    this.proposals.clear();
  }
}
