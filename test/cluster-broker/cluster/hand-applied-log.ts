import type { ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import type { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';

/** A leader's log the test applies by hand: proposals wait until the test applies them. */
export class HandAppliedLog implements ReplicaPort {
  readonly leaderId = 'n1';
  readonly term = 1;
  readonly proposed: Uint8Array[] = [];
  private index = 0;
  constructor(private readonly sm: ClusterStateMachine) {}
  isLeader(): boolean {
    return true;
  }
  append(data: Uint8Array): void {
    this.proposed.push(data); // the backend learns the outcome from the apply, not from here
  }
  apply(data: Uint8Array): void {
    this.sm.apply({ index: ++this.index, term: this.term, data });
  }
}
