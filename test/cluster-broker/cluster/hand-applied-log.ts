import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';

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

/** A serving leader's backend over a HandAppliedLog, its state machine's outcomes wired back to it. */
export function handAppliedLeader(origin: string): {
  backend: ClusterBackend;
  sm: ClusterStateMachine;
  log: HandAppliedLog;
} {
  let backend: ClusterBackend | undefined;
  const sm = new ClusterStateMachine({ applied: (o, seq, outcome) => backend?.onApplied(o, seq, outcome) });
  backend = new ClusterBackend({ memberId: 'n1', origin, submitTimeoutMs: 60_000 });
  const log = new HandAppliedLog(sm);
  backend.attach(sm, log, () => false);
  backend.setServing(true);
  return { backend, sm, log };
}
