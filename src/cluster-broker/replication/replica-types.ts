/**
 * What a Replica (replica.ts) is given and what it tells: the application it replicates
 * (StateMachine), its options, its events, a committed position, and the waiter kept per
 * proposal until its entry is applied. Types only, so the class's layers and its users share them.
 */
import type { Logger } from '../../common/logger.js';
import type { DurableFs } from '../files/durable-fs.js';
import type { ClusterTlsOptions } from './cluster-tls.js';
import type { Entry, RaftConfig, Snapshot, SnapshotData, SoftState } from './raft/types.js';
import type { PeerAddress } from './tcp-transport.js';
import type { WireCodec } from './wire.js';

/** The application replicated by the log (the broker's event applier). */
export interface StateMachine {
  /** Apply one committed entry, in log order. `entry.data === null` is a leader no-op. */
  apply(entry: Entry): void;
  /** Replace the whole state by a snapshot (at start-up, and when the leader sends one). */
  restore(snapshot: Snapshot): void;
  /**
   * Serialize the state as of the last applied entry; enables log compaction. Parts may be views
   * of bytes the state keeps, provided those never change (the snapshot is kept and sent later).
   */
  snapshot?(): SnapshotData;
  /** Bytes of live data a snapshot would hold (cheap to ask); paces compaction of a large state. */
  liveBytes?(): number;
}

export interface ReplicaOptions {
  readonly id: string;
  readonly clusterId: string;
  /** Every member (this one included) and the address to dial it at. */
  readonly members: Readonly<Record<string, PeerAddress>>;
  /** Where to listen; defaults to this member's own entry in `members`. */
  readonly listen?: PeerAddress;
  readonly dataDir: string;
  /** Where a damaged store's files are moved (default `<dataDir>/quarantine`). */
  readonly quarantineDir?: string;
  readonly stateMachine: StateMachine;
  /** Timeouts and flags of the core (ids and members come from above). */
  readonly raft?: Omit<RaftConfig, 'id' | 'members'>;
  /** The file system the store goes through (default node:fs; tests model a power loss). */
  readonly fs?: DurableFs;
  /** One write + fsync per Ready (default true) or one per entry. */
  readonly groupCommit?: boolean;
  /**
   * Compact after this many applied entries (default 10000; 0 never), once the log also pays for a
   * snapshot of the state (store/compaction-pace.ts). Needs stateMachine.snapshot.
   */
  readonly snapshotEvery?: number;
  /** Compact at this many bytes of log since the last snapshot whatever the state (default 64 MiB). */
  readonly maxLogBytes?: number;
  /** The cluster secret members prove to each other (see handshake.ts); absent: none. */
  readonly secret?: Uint8Array;
  /** Mutual TLS between members. */
  readonly tls?: ClusterTlsOptions;
  /** Message encoding between members; default AMQP values (`amqpWireCodec`); a cluster member passes `binaryWireCodec`. */
  readonly codec?: WireCodec;
  readonly logger?: Logger;
  /** Monotonic milliseconds; default performance.now. */
  readonly clock?: () => number;
}

export interface ReplicaEvents {
  /** Role, term or leader changed. */
  role: (s: SoftState) => void;
  /** isQuorate() changed. */
  quorate: (quorate: boolean) => void;
  /** Entries up to index were applied. */
  applied: (index: number) => void;
  /** Storage failed: the member stopped (it must not go on without durability). */
  error: (err: Error) => void;
  /** The member finished recovering (HardState.recovering): it votes and counts toward commit again. */
  recovered: () => void;
  /**
   * The cluster's regular traffic has this process awake: its timer fired (a leader's heartbeats
   * are due), it sent due heartbeats from an input, or a leader's heartbeat came in. Periodic work
   * can run now rather than wake the process again (docs/cluster-member.md#timers).
   */
  heartbeat: () => void;
}

export interface Committed {
  readonly index: number;
  readonly term: number;
}

export interface Waiter {
  term: number;
  resolve: (c: Committed) => void;
  reject: (e: Error) => void;
}
