/** What a run of the broker simulation (broker-sim.ts) takes and gives, its events, and one member. */
import type { ClusterBackend } from '../../../../src/cluster-broker/cluster/cluster-backend.js';
import type {
  ClusterStateMachine,
  EntryOutcome,
} from '../../../../src/cluster-broker/cluster/cluster-state-machine.js';
import type { RaftCore } from '../../../../src/cluster-broker/replication/raft/core.js';
import type { Message, Ready } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { SimDisk } from '../../replication/sim/sim-disk.js';
import type { Client } from './sim-clients.js';
import type { SimReplicaPort } from './sim-replica-port.js';

export interface BrokerSimOptions {
  seed: number;
  nodes?: number;
  /** Simulated ms of faults and traffic. Default 2000. */
  faultMs?: number;
  /** After healing, every member must converge within this. Default 8000. */
  settleMs?: number;
  /**
   * A deliberate bug, so the test can show the checks catch it. Never set outside that test.
   * - 'local-clock': members apply events with their own clock instead of the leader's stamp;
   * - 'ack-on-append': the backend answers an enqueue once its leader appended it, not at commit
   *   + apply (BackendUnsafeFlags.ackOnAppend);
   * - 'skip-origin-check': the backend settles a request on any applied entry with its number,
   *   whatever its origin (BackendUnsafeFlags.skipOriginCheck).
   */
  bug?: 'local-clock' | 'ack-on-append' | 'skip-origin-check';
}

export interface BrokerSimResult {
  seed: number;
  ok: boolean;
  error?: string;
  committed: number;
  acked: number;
  enqueued: number;
  acquired: number;
  crashes: number;
  simMs: number;
}

export type Ev =
  | { k: 'deliver'; msg: Message }
  | { k: 'app'; to: number; bytes: Uint8Array }
  | { k: 'timer'; node: number; epoch: number }
  | { k: 'backend-timer'; node: number; epoch: number; id: number }
  | { k: 'fsync'; node: number; epoch: number }
  | { k: 'client'; node: number; epoch: number; client: number }
  | { k: 'housekeeping' }
  | { k: 'fault' }
  | { k: 'heal' };

/** One member process: everything but `disk` and `skew` is new at each start. */
export interface SimNode {
  id: string;
  up: boolean;
  epoch: number;
  core: RaftCore | undefined;
  port: SimReplicaPort | undefined;
  backend: ClusterBackend | undefined;
  /** The backend's armed timers, by id. */
  timers: Map<number, () => void>;
  disk: SimDisk;
  inflight: Ready | undefined;
  timerAt: number;
  sm: ClusterStateMachine;
  /** What the entry being applied did (the state machine's `applied` hook). */
  outcome: EntryOutcome | undefined;
  incarnation: number;
  skew: number;
  clients: Client[];
  releasing: boolean;
  snapEvery: number;
}
