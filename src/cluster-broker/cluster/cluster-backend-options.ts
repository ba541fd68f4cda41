/**
 * The options and ports of the cluster member's backend (cluster-backend.ts): what it is built
 * with and the parts of the member it drives (the replica, the member-to-member sender, timers).
 * Apart from the class so the simulation and the assembly can name them without the class.
 */
import type { AppMessage } from './peer-wire.js';

/** The part of Replica the backend drives. */
export interface ReplicaPort {
  isLeader(): boolean;
  readonly leaderId: string | null;
  readonly term: number;
  /**
   * Appends `data` to the log as leader (throws at once if it cannot). Nothing waits on it: the
   * backend learns the entry's fate from its own apply (onApplied), a change of leader or term
   * (onRole) or the request's deadline, as it does for a request it forwarded.
   */
  append(data: Uint8Array): unknown;
}

/** Sends a member-to-member message; false when the peer is not connected (nothing sent). */
export type AppSender = (m: AppMessage) => boolean;

/** The timers the backend arms (the deterministic simulation passes simulated ones). */
export interface BackendTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/**
 * Deliberately broken rules, so the broker simulation (test/cluster-broker/cluster/sim-broker.test.ts) can show
 * that its checks catch them. Never set outside tests.
 */
export interface BackendUnsafeFlags {
  /** Settle a pending request on an applied entry with its number whatever the entry's origin. */
  readonly skipOriginCheck?: boolean;
  /** The leader answers an enqueue `enqueued` once it appended it, before commit + apply. */
  readonly ackOnAppend?: boolean;
}

export interface ClusterBackendOptions {
  memberId: string;
  /** `<member>@<incarnation>` of this process. */
  origin: string;
  /** Reject a request not applied within this (outcome unknown). Default 5000 ms. */
  submitTimeoutMs?: number;
  /** The leader's clock for stamping. Default Date.now. */
  clock?: () => number;
  /** Default: the process's setTimeout / clearTimeout. */
  timers?: BackendTimers;
  unsafe?: BackendUnsafeFlags;
}
