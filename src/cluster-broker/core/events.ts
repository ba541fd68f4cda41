/**
 * Broker events: the only inputs of BrokerState. Single node: appended to the local event log,
 * then applied. Cluster: replicated through the Raft log and applied by every member in log order.
 *
 * Every event carries `leaderTime` (ms since the epoch, written by whoever proposed it). The state
 * never reads a clock: TTL and dedup age are judged against the largest leaderTime applied so far
 * (so a new leader whose clock is behind cannot move time backwards).
 */

/** Options of a queue, fixed when it is first declared (a later declare does not change them). */
export interface QueueOptions {
  /** Enqueues beyond this many messages (available + acquired) are refused. Default unlimited. */
  maxMessages?: number;
  /** Enqueues that would push the sum of message sizes beyond this are refused. Default unlimited. */
  maxBytes?: number;
  /**
   * Where rejected messages go. `undefined` = the default `<queue>.dlq` (auto-declared on first
   * use), except for a queue whose own name ends in `.dlq`, which defaults to none. `null` = none:
   * rejected messages are dropped.
   */
  deadLetterQueue?: string | null;
  /**
   * Poison messages (docs/broker-features.md#delivery-limit): a message whose delivery-count
   * reaches this (each delivery that failed: its link was lost, or it came back modified with
   * delivery-failed) goes to the dead-letter queue instead of back to the queue. Default none.
   */
  deliveryLimit?: number;
  /** Dedup window: at most this many remembered message-ids (default 10_000; 0 disables dedup). */
  dedupWindowCount?: number;
  /** Dedup window: a remembered message-id is forgotten this many ms (leader time) after its enqueue. Default 600_000. */
  dedupWindowMs?: number;
  /**
   * A dynamic node (a broker-named temporary queue): the link that asked for it
   * (`containerId/linkName`) and its lifetime policy. The network layer deletes it by the policy.
   */
  temporary?: {
    /** The link that asked for it, `containerId/linkName`. */
    owner: string;
    /** When the node is deleted. */
    policy: LifetimePolicy;
  };
  /**
   * This name is a topic (docs/topics.md): it holds no messages itself; an enqueue to it puts one
   * message into every subscription of the topic whose selector matches, sharing the bytes.
   */
  topic?: true;
  /**
   * This queue is a subscription of `topic` (docs/topics.md#subscriptions): it gets every message
   * published to the topic after it was declared (and, with a selector, only the matching ones).
   * Durable unless `temporary` is also set (a non-durable subscription lives while its link does).
   */
  subscription?: {
    /** The topic it subscribes to. */
    topic: string;
    /** A JMS selector (apache.org:selector-filter:string), evaluated once per message at apply. */
    selector?: string;
  };
  /**
   * The user whose link made this queue (a dynamic node or a topic subscription), recorded when
   * that connection logged in: only that user may receive from it or attach to it under its
   * names (docs/security.md#identity). Absent: made by an anonymous connection or before owners
   * were recorded; shared as before.
   */
  ownerUser?: string;
}

/** AMQP 1.0 lifetime policies of dynamic nodes (part 3, 3.5.10). */
export type LifetimePolicy =
  | 'delete-on-close'
  | 'delete-on-no-links'
  | 'delete-on-no-messages'
  | 'delete-on-no-links-or-messages';

export const DEFAULT_DEDUP_WINDOW_COUNT = 10_000;
export const DEFAULT_DEDUP_WINDOW_MS = 600_000;
export const DLQ_SUFFIX = '.dlq';

/** A rejection's error, as in the rejected outcome. */
export interface DeadLetterError {
  condition: string;
  description?: string;
}

export type SettleOutcome =
  | { type: 'accepted' }
  | { type: 'rejected'; error?: DeadLetterError }
  | { type: 'released' }
  | { type: 'modified'; deliveryFailed?: boolean; undeliverableHere?: boolean };

export interface DeclareQueueEvent {
  type: 'declare';
  leaderTime: number;
  queue: string;
  options: QueueOptions;
}

export interface DeleteQueueEvent {
  type: 'delete';
  leaderTime: number;
  queue: string;
  /**
   * Delete only if the queue's owner was lost at exactly this leader time and did not come back
   * since (docs/topics.md#owner-gone): the end of a grace period, decided by whichever member saw
   * it expire, is void if the owner re-attached meanwhile (the log orders the two).
   */
  ifOwnerLostAt?: number;
}

/**
 * Drop every message of `queue` that no consumer holds (management's purge): acquired messages
 * stay with their consumers and are settled as usual (RabbitMQ's purge does the same).
 */
export interface PurgeQueueEvent {
  type: 'purge';
  leaderTime: number;
  queue: string;
}

/**
 * The owner link of a temporary queue (a dynamic node, a non-durable subscription) is attached
 * on the process `holder` (cluster: `<member>@<incarnation>`; single node: `local`). Cancels a
 * pending owner-lost grace period.
 */
export interface OwnerAttachedEvent {
  type: 'owner-attached';
  leaderTime: number;
  queue: string;
  holder: string;
}

/**
 * The owner link of a temporary queue went away without closing (connection lost, member died):
 * its grace period starts at this event's leaderTime (docs/topics.md#owner-gone). Ignored when the
 * queue's holder is no longer `holder` (the owner re-attached elsewhere first).
 */
export interface OwnerLostEvent {
  type: 'owner-lost';
  leaderTime: number;
  queue: string;
  holder: string;
}

export interface EnqueueEvent {
  type: 'enqueue';
  leaderTime: number;
  queue: string;
  /**
   * The encoded AMQP message, opaque to the state. The state copies it into its queue's chunks
   * (byte-arena.ts), except a cluster member's, which keeps it as a view of its committed entry
   * (EntryViews).
   */
  message: Uint8Array;
  /** Canonical (message-id type, value) string computed by the proposer; undefined = never deduplicated. */
  dedupKey?: string;
  /** Absolute expiry deadline in leader time (ms); undefined = never expires. */
  expiresAt?: number;
  /** The header's delivery-count as received (default 0). */
  deliveryCount?: number;
}

/**
 * Acquire up to `max` (default 1) messages from `queue` for `consumer`: the key that owns the
 * acquisitions, e.g. `containerId/linkName`, or `containerId/linkName#<attachment>` when
 * successive attachments of one link must not release each other's messages.
 */
export interface AcquireEvent {
  type: 'acquire';
  leaderTime: number;
  queue: string;
  consumer: string;
  max?: number;
  /**
   * The link's identity for modified{undeliverableHere} (messages marked undeliverable for this
   * link are skipped). Default: `consumer`. Set it when `consumer` carries an attachment suffix,
   * so the mark survives a re-attach of the same link.
   */
  link?: string;
  /**
   * Acquire exactly these messages (ascending seqs), each only if still available (and not
   * undeliverable for the link); `max` is then ignored. A consumer with a selector chooses the
   * messages it matches this way, so the selector is evaluated once, by the member serving it.
   */
  seqs?: number[];
}

/** Settle acquired messages (by sequence number) with one outcome, as a disposition range does. */
export interface SettleEvent {
  type: 'settle';
  leaderTime: number;
  consumer: string;
  seqs: number[];
  outcome: SettleOutcome;
  /** The link identity modified{undeliverableHere} marks (default `consumer`); see AcquireEvent.link. */
  link?: string;
}

/** A link or connection went away: its acquired messages become available, delivery-count unchanged. */
export interface ReleaseConsumerEvent {
  type: 'release-consumer';
  leaderTime: number;
  consumer: string;
}

/**
 * Consumer `consumer` (link identity `link`) asks that, when it goes away without settling what it
 * acquired, those messages are held for the same link identity for `ms` of leader time instead of
 * becoming available to everyone (docs/delivery-contract.md#held-unsettled): a re-attach of the
 * link, on any member, gets them back. `ms` 0 cancels the request.
 */
export interface HoldUnsettledEvent {
  type: 'hold-unsettled';
  leaderTime: number;
  consumer: string;
  link: string;
  ms: number;
}

/** Every consumer went away (single-node restart): all acquired messages become available. */
export interface ReleaseAllEvent {
  type: 'release-all';
  leaderTime: number;
}

/** Time passed: drop messages whose expiry deadline passed and forget aged dedup entries. */
export interface ExpireEvent {
  type: 'expire';
  leaderTime: number;
}

/**
 * A local transaction's commit (AMQP 1.0 part 4): its transactional enqueues and settlements,
 * applied together as one event (one log entry: all or nothing across a crash or a member
 * failure). If any enqueue would be refused (unknown queue, queue limit), nothing is applied.
 */
export interface CommitEvent {
  type: 'commit';
  leaderTime: number;
  events: Array<EnqueueEvent | SettleEvent>;
}

export type BrokerEvent =
  | CommitEvent
  | DeclareQueueEvent
  | DeleteQueueEvent
  | PurgeQueueEvent
  | OwnerAttachedEvent
  | OwnerLostEvent
  | EnqueueEvent
  | AcquireEvent
  | SettleEvent
  | ReleaseConsumerEvent
  | HoldUnsettledEvent
  | ReleaseAllEvent
  | ExpireEvent;

export type BrokerEventType = BrokerEvent['type'];
