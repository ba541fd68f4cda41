/** What applying an event did: the broker's network layer acts on these (answer, send, confirm). */
import type { BrokerEvent, DeadLetterError } from './events.js';

export interface DeclareResult {
  type: 'declare';
  /** false when the queue already existed (its options are left as they were). */
  created: boolean;
}

export interface DeleteResult {
  type: 'delete';
  deleted: boolean;
  /** Messages dropped with the queue, acquired ones included. */
  dropped: number;
}

export interface PurgeResult {
  type: 'purge';
  /** False for an unknown queue. */
  found: boolean;
  /** Available messages dropped (acquired ones stay with their consumers). */
  purged: number;
}

export type EnqueueResult =
  /**
   * `seq` of the new message. To a topic: the queues of the subscriptions that got it (ascending
   * seqs from `seq` on, in this order); `seq` is 0 when no subscription did.
   */
  | { type: 'enqueue'; status: 'enqueued'; seq: number; fannedOut?: string[] }
  /** Already in the dedup window: not enqueued again; the broker settles the transfer accepted. */
  | { type: 'enqueue'; status: 'duplicate' }
  /** Not enqueued: the broker settles the transfer rejected with this condition. */
  | { type: 'enqueue'; status: 'refused'; condition: string; description: string };

/** One acquired message, with the header values the broker must send in place of the stored header. */
export interface AcquiredMessage {
  seq: number;
  queue: string;
  /** The message exactly as enqueued (the bare message is never rewritten). */
  message: Uint8Array;
  /** Header delivery-count to send. */
  deliveryCount: number;
  /** Header first-acquirer to send: true only if no link acquired this message before. */
  firstAcquirer: boolean;
  /** Set for a message in a dead-letter queue: why it was dead-lettered and from where. */
  deadLetter?: DeadLetterInfo;
}

export interface DeadLetterInfo {
  fromQueue: string;
  error?: DeadLetterError;
}

export interface AcquireResult {
  type: 'acquire';
  /** Empty when nothing was available for this consumer (also for an unknown queue). */
  messages: AcquiredMessage[];
}

export interface SettleResult {
  type: 'settle';
  /** Seqs this event settled. */
  settled: number[];
  /** Seqs not acquired by this consumer when the event applied (released meanwhile, queue deleted...). */
  stale: number[];
  /**
   * Messages moved to a dead-letter queue (seq there): rejected, or modified past the delivery
   * limit. Such messages not listed were dropped (no DLQ, or the DLQ full).
   */
  deadLettered: Array<{ seq: number; queue: string; newSeq: number }>;
}

export interface ReleaseResult {
  type: 'release-consumer' | 'release-all';
  /** Seqs made available again (ascending). */
  released: number[];
  /**
   * Messages that reached their queue's delivery limit and went to its dead-letter queue
   * instead (docs/broker-features.md#delivery-limit); absent when none did.
   */
  deadLettered?: Array<{ seq: number; queue: string; newSeq: number }>;
}

export interface HoldResult {
  type: 'hold-unsettled';
}

export interface OwnerResult {
  type: 'owner-attached' | 'owner-lost';
  /** False when nothing changed (no such temporary queue; owner-lost: its holder moved on). */
  changed: boolean;
}

export interface ExpireResult {
  type: 'expire';
  /** Seqs of messages dropped because their deadline passed (ascending). */
  expired: number[];
}

export type CommitResult =
  /** Every event applied: one result per event, in order. */
  | { type: 'commit'; status: 'committed'; results: Array<EnqueueResult | SettleResult> }
  /** Nothing applied: an enqueue would have been refused for this reason. */
  | { type: 'commit'; status: 'refused'; condition: string; description: string };

export type ApplyResult =
  | CommitResult
  | DeclareResult
  | DeleteResult
  | PurgeResult
  | OwnerResult
  | EnqueueResult
  | AcquireResult
  | SettleResult
  | ReleaseResult
  | HoldResult
  | ExpireResult;

/** The result type for an event type, so `state.apply(enqueueEvent)` is typed as EnqueueResult. */
export type ResultOf<E extends BrokerEvent> = E['type'] extends 'release-consumer' | 'release-all'
  ? ReleaseResult
  : E['type'] extends 'owner-attached' | 'owner-lost'
    ? OwnerResult
    : Extract<ApplyResult, { type: E['type'] }>;

/** An enqueue (alone, or in a transaction) that is not applied, and why. */
export function refused<T extends 'enqueue' | 'commit'>(
  type: T,
  condition: string,
  description: string,
): { type: T; status: 'refused'; condition: string; description: string } {
  return { type, status: 'refused', condition, description };
}
