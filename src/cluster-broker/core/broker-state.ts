/**
 * BrokerState: the broker as a deterministic state machine over BrokerEvents.
 *
 * Pure: no clock, no randomness, no I/O. Two states that applied the same events produce
 * identical snapshots, so a single node (event log) and every cluster member (Raft log) share
 * this code. `apply` never throws for an event that cannot be satisfied any more (unknown queue,
 * empty queue, message already settled): its result says so, because by the time an event
 * applies the world may have moved on (the log orders competing proposals).
 *
 * This file holds the state's fields, the event dispatch and the public query and snapshot
 * methods; each event's rules live in their own file as free functions over the state
 * (README.md#layout).
 */

import { acquire } from './acquire.js';
import type { EntryViews } from './byte-arena.js';
import { commit } from './commit.js';
import { enqueue } from './enqueue.js';
import type { BrokerEvent } from './events.js';
import { ExpiryHeap } from './expiry-heap.js';
import { expire } from './message-life.js';
import type { Queue } from './queue.js';
import { declare, deleteQueue, ownerAttached, ownerLost, purge } from './queue-lifecycle.js';
import type { QueuedMessage } from './queued-message.js';
import type { ApplyResult, ResultOf } from './results.js';
import { holdUnsettled, releaseAll, releaseConsumer, settle } from './settle.js';
import { readSnapshot, writeSnapshot, writeSnapshotParts } from './snapshot-codec.js';
import type { QueueApplyCounts, QueueInfo } from './state-queries.js';
import * as queries from './state-queries.js';

export { DELIVERY_LIMIT_CONDITION } from './dead-letter.js';
export type { QueueApplyCounts, QueueInfo } from './state-queries.js';

export class BrokerState {
  /** @internal */ queues = new Map<string, Queue>();
  /** @internal consumer key -> its acquired messages by seq. */
  consumers = new Map<string, Map<number, QueuedMessage>>();
  /** @internal */ expiry = new ExpiryHeap();
  /**
   * @internal consumer key -> the hold it asked for (hold-unsettled): what it holds when it is
   * released waits for its link identity that long. Part of the snapshot.
   */
  holds = new Map<string, { link: string; ms: number }>();
  /** @internal */ nextSeq = 1;
  /**
   * @internal topic name -> its subscription queues in declaration order (derived from the
   * queues' options: rebuilt on restore, not stored).
   */
  subscriptions = new Map<string, Queue[]>();
  /** Largest leaderTime applied so far (monotonic even if a new leader's clock is behind). */
  now = 0;
  /** Events applied since creation or the last restore (diagnostics; not part of the snapshot). */
  appliedCount = 0;

  /**
   * `views`: keep enqueued messages as views of the events' bytes instead of copies, for a caller
   * whose event bytes are never written again nor their buffers reused (a cluster member's
   * committed entries). Without it (the single node: its events' bytes may be views of large
   * read buffers that a kept view would pin whole) every kept message is copied into its queue's
   * arena.
   */
  constructor(/** @internal */ readonly views?: EntryViews) {}

  apply<E extends BrokerEvent>(event: E): ResultOf<E>;
  apply(event: BrokerEvent): ApplyResult {
    if (event.leaderTime > this.now) this.now = event.leaderTime;
    this.appliedCount++;
    switch (event.type) {
      case 'declare':
        return declare(this, event);
      case 'delete':
        return deleteQueue(this, event);
      case 'purge':
        return purge(this, event);
      case 'owner-attached':
        return ownerAttached(this, event);
      case 'owner-lost':
        return ownerLost(this, event);
      case 'enqueue':
        return enqueue(this, event);
      case 'acquire':
        return acquire(this, event);
      case 'settle':
        return settle(this, event);
      case 'release-consumer':
        return releaseConsumer(this, event.consumer);
      case 'hold-unsettled':
        return holdUnsettled(this, event);
      case 'release-all':
        return releaseAll(this);
      case 'expire':
        return expire(this);
      case 'commit':
        return commit(this, event);
    }
  }

  // ---- queries (state-queries.ts) ----

  hasQueue(name: string): boolean {
    return this.queues.has(name);
  }

  queueInfo(name: string): QueueInfo | undefined {
    return queries.queueInfo(this, name);
  }

  /** See QueueApplyCounts (monitoring: publish and deliver rates). */
  queueApplyCounts(name: string): QueueApplyCounts | undefined {
    return queries.queueApplyCounts(this, name);
  }

  /** Bytes of every queued message (what a snapshot mostly consists of), without walking the messages. */
  liveBytes(): number {
    return queries.liveBytes(this);
  }

  listQueues(): QueueInfo[] {
    return [...this.queues.keys()].map((n) => this.queueInfo(n)!);
  }

  /** Seqs a consumer holds (acquired, not yet settled), ascending. */
  acquiredBy(consumer: string): number[] {
    return queries.acquiredBy(this, consumer);
  }

  /**
   * A queue's messages in seq order, acquired ones included, without acquiring them (browsing,
   * management, tests). `message` is the stored bytes: do not mutate.
   */
  browse(
    queue: string,
    limit = Number.POSITIVE_INFINITY,
  ): Array<{ seq: number; message: Uint8Array; acquiredBy?: string }> {
    return queries.browse(this, queue, limit);
  }

  /**
   * The earliest expiry deadline of any message (leader time), or undefined: the proposer can
   * time its next `expire` event instead of polling. May name a message already gone (a harmless
   * early expire).
   */
  nextExpiryAt(): number | undefined {
    return this.expiry.peek()?.expiresAt;
  }

  /** The subscription queues of `topic`, in declaration order (docs/topics.md). */
  subscriptionsOf(topic: string): string[] {
    return (this.subscriptions.get(topic) ?? []).map((q) => q.name);
  }

  /**
   * Temporary queues with an owner record (docs/topics.md#owner-gone): the process holding the
   * owner link, or since when (leader time) the owner is lost.
   */
  ownedQueues(): Array<{ queue: string; holder?: string; ownerLostAt?: number }> {
    return queries.ownedQueues(this);
  }

  /** Consumer keys holding at least one message. */
  listConsumers(): string[] {
    return [...this.consumers.keys()];
  }

  /**
   * Walks a queue's available messages in delivery order until `visit` returns false. `entry`
   * identifies the message while it lives in this state (a consumer's selector caches its
   * verdict under it); `message` is the stored bytes: do not mutate.
   */
  scanAvailable(queue: string, visit: (seq: number, message: Uint8Array, entry: object) => boolean): void {
    queries.scanAvailable(this, queue, visit);
  }

  /**
   * Browsing (distribution-mode copy, docs/broker-features.md#browsing): up to `max` available,
   * unexpired messages of `queue` with a seq above `afterSeq`, in seq order, with their current
   * delivery-count; nothing is acquired. `message` is the stored bytes: do not mutate.
   */
  browseAvailable(
    queue: string,
    afterSeq: number,
    max: number,
  ): Array<{ seq: number; message: Uint8Array; deliveryCount: number }> {
    return queries.browseAvailable(this, queue, afterSeq, max);
  }

  /** Seqs of a queue's available messages in delivery order (for tests and diagnostics). */
  availableSeqs(queue: string): number[] {
    return queries.availableSeqs(this, queue);
  }

  /**
   * When the first reservation in `queue` that keeps `link` from a message lapses (leader time),
   * or undefined: a consumer that got fewer messages than it asked for tries again then.
   */
  reservationLapse(queue: string, link: string): number | undefined {
    return queries.reservationLapse(this, queue, link);
  }

  // ---- snapshot (snapshot-codec.ts) ----

  snapshot(): Uint8Array {
    return writeSnapshot(this);
  }

  /** The same snapshot as parts referencing the stored message bytes (writeSnapshotParts). */
  snapshotParts(): Uint8Array[] {
    return writeSnapshotParts(this);
  }

  /** Replaces this state's contents with a snapshot's. */
  restore(bytes: Uint8Array): void {
    // Parse into a fresh state first: a damaged snapshot leaves this one untouched.
    const fresh = new BrokerState();
    readSnapshot(fresh, bytes);
    this.queues = fresh.queues;
    this.subscriptions = fresh.subscriptions;
    this.consumers = fresh.consumers;
    this.holds = fresh.holds;
    this.expiry = fresh.expiry;
    this.nextSeq = fresh.nextSeq;
    this.now = fresh.now;
    this.appliedCount = 0;
  }

  static fromSnapshot(bytes: Uint8Array): BrokerState {
    const s = new BrokerState();
    s.restore(bytes);
    return s;
  }
}
