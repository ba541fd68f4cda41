/**
 * The ground floor of the cluster member's backend (cluster-backend.ts): every field it is made
 * of, in one place so the object keeps one shape, and the constructor that reads its options,
 * with the records of a pending request and of a deadline they share. Split from the routing of
 * requests (cluster-backend-routing.ts) and the broker-facing API (cluster-backend.ts) so each
 * file has one job; a class chain, not helpers, so the per-message paths stay plain method calls.
 */
import { EventEmitter } from 'eventemitter3';
import { notQuorateDescription } from '../../wire-extensions.js';
import { VarintWriter } from '../core/binary.js';
import { ByteArena, MAX_PACKED_BYTES } from '../core/byte-arena.js';
import type { BrokerBackendEvents } from '../server/backend.js';
import type {
  AppSender,
  BackendTimers,
  BackendUnsafeFlags,
  ClusterBackendOptions,
  ReplicaPort,
} from './cluster-backend-options.js';
import type { ClusterStateMachine } from './cluster-state-machine.js';

/** The scratch writer's size: a small entry's (byte-arena.ts MAX_PACKED_BYTES) and some room. */
export const SCRATCH_BYTES = 2 * MAX_PACKED_BYTES;

const processTimers: BackendTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The deadline of the requests made at one reading of the clock: one timer for all of them, not
 * one per request (a publisher's window arrives in a few turns, each with many requests). The
 * timer is cleared once none of them is pending any more, as each request's own was.
 */
export interface DeadlineGroup {
  /** The clock when the group's first request was made. */
  readonly at: number;
  /** The armed timer; undefined once cleared or fired. */
  handle: unknown;
  /** Requests of the group still pending. */
  open: number;
}

export interface Pending {
  bytes: Uint8Array;
  resolve: (result: unknown) => void;
  reject: (e: Error) => void;
  deadline: DeadlineGroup;
  /**
   * For a claim or acquire: the link key it is for (dropped unsent if the link goes). A settle
   * has none: it carries the client's decision, which must reach the log before the link's
   * release does (a dropped accept would bring the message back).
   */
  linkFor?: string;
  /** Where and in which term it was sent (undefined: not sent yet). */
  sentTo?: string;
  sentTerm?: number;
}

export abstract class ClusterBackendFields extends EventEmitter<BrokerBackendEvents> {
  serving = false;
  notServingReason: string | undefined = notQuorateDescription('starting');
  readonly origin: string;
  protected sm: ClusterStateMachine | undefined;
  protected replica: ReplicaPort | undefined;
  protected send: AppSender | undefined;
  protected seq = 0;
  protected readonly pending = new Map<number, Pending>();
  /** Requests waiting for a reachable leader, in submission order. */
  protected parked: number[] = [];
  /** retryParked is sending (see there). */
  protected draining = false;
  protected retryTimer: unknown;
  /** Link keys with a live consumer here -> whether our claim for it has applied. */
  protected readonly links = new Map<string, boolean>();
  protected closed = false;
  protected readonly timeoutMs: number;
  protected readonly clock: () => number;
  protected readonly timers: BackendTimers;
  protected readonly unsafe: BackendUnsafeFlags;
  protected lastLeader: string | null = null;
  protected lastTerm = 0;
  /** The newest deadline group: requests made at the same clock reading join it. */
  protected deadlineGroup: DeadlineGroup | undefined;
  /** Where small entries are encoded before their copy into `entryChunks`. */
  protected scratch = new VarintWriter(SCRATCH_BYTES);
  /**
   * Small entries' bytes (this member's own requests, and on the leader the followers' forwarded
   * ones), back to back in shared chunks rather than a buffer each (a buffer is an allocation and
   * a GC-tracked backing store per message). They live in the Raft log until it is compacted, in
   * log order, so the chunks free in turn.
   */
  protected readonly entryChunks = new ByteArena();

  constructor(protected readonly opts: ClusterBackendOptions) {
    super();
    this.origin = opts.origin;
    this.timeoutMs = opts.submitTimeoutMs ?? 5000;
    this.clock = opts.clock ?? Date.now;
    this.timers = opts.timers ?? processTimers;
    this.unsafe = opts.unsafe ?? {};
  }
}
