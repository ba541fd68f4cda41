/**
 * BrokerState: the broker as a deterministic state machine over BrokerEvents.
 *
 * Pure: no clock, no randomness, no I/O. Two states that applied the same events produce
 * identical snapshots, so a single node (event log) and every cluster member (Raft log) share
 * this code. `apply` never throws for an event that cannot be satisfied any more (unknown queue,
 * empty queue, message already settled): its result says so, because by the time an event
 * applies the world may have moved on (the log orders competing proposals).
 */

import { type ByteArena, type EntryViews, type StoredBytes, storeCopy } from './byte-arena.js';
import type {
  AcquireEvent,
  BrokerEvent,
  CommitEvent,
  DeclareQueueEvent,
  DeleteQueueEvent,
  EnqueueEvent,
  HoldUnsettledEvent,
  OwnerAttachedEvent,
  OwnerLostEvent,
  PurgeQueueEvent,
  QueueOptions,
  SettleEvent,
} from './events.js';
import { ExpiryHeap } from './expiry-heap.js';
import { Queue } from './queue.js';
import { QueuedMessage } from './queued-message.js';
import type {
  AcquiredMessage,
  AcquireResult,
  ApplyResult,
  CommitResult,
  DeclareResult,
  DeleteResult,
  EnqueueResult,
  ExpireResult,
  HoldResult,
  OwnerResult,
  PurgeResult,
  ReleaseResult,
  ResultOf,
  SettleResult,
} from './results.js';
import { readSnapshot, writeSnapshot, writeSnapshotParts } from './snapshot-codec.js';

/** One queue's size, as `stats()` reports it. */
export interface QueueInfo {
  /** The queue's name (its address). */
  name: string;
  /** Its limits, dead-letter queue and dedup window. */
  options: QueueOptions;
  /** Messages in the queue, available and acquired. */
  depth: number;
  /** Messages that can be handed to a consumer. */
  available: number;
  /** Messages held by consumers, not yet settled. */
  acquired: number;
  /** Encoded bytes of every message in the queue. */
  bytes: number;
}

/**
 * Diagnostics of one queue, not part of its contents (two states with equal snapshots may differ
 * here): counts of what was applied since this state started or was last restored.
 */
export interface QueueApplyCounts {
  /** Messages added (enqueued, or dead-lettered into it). */
  added: number;
  /** Acquisitions (deliveries, redeliveries included). */
  acquisitions: number;
}

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
  constructor(private readonly views?: EntryViews) {}

  apply<E extends BrokerEvent>(event: E): ResultOf<E>;
  apply(event: BrokerEvent): ApplyResult {
    if (event.leaderTime > this.now) this.now = event.leaderTime;
    this.appliedCount++;
    switch (event.type) {
      case 'declare':
        return this.declare(event);
      case 'delete':
        return this.deleteQueue(event);
      case 'purge':
        return this.purge(event);
      case 'owner-attached':
        return this.ownerAttached(event);
      case 'owner-lost':
        return this.ownerLost(event);
      case 'enqueue':
        return this.enqueue(event);
      case 'acquire':
        return this.acquire(event);
      case 'settle':
        return this.settle(event);
      case 'release-consumer': {
        const deadLettered: DeadLettered[] = [];
        const released = this.releaseConsumer(event.consumer, deadLettered);
        return releaseResult('release-consumer', released, deadLettered);
      }
      case 'hold-unsettled':
        return this.holdUnsettled(event);
      case 'release-all': {
        const deadLettered: DeadLettered[] = [];
        const held = [...this.consumers.values()].flatMap((byConsumer) => [...byConsumer.values()]);
        const released = this.releaseHeld(held, deadLettered);
        this.holds.clear();
        return releaseResult('release-all', released, deadLettered);
      }
      case 'expire':
        return this.expire();
      case 'commit':
        return this.commit(event);
    }
  }

  // ---- queries ----

  hasQueue(name: string): boolean {
    return this.queues.has(name);
  }

  queueInfo(name: string): QueueInfo | undefined {
    const q = this.queues.get(name);
    if (!q) return undefined;
    return {
      name,
      options: q.options,
      depth: q.messageCount,
      available: q.available.size,
      acquired: q.acquired.size,
      bytes: q.byteCount,
    };
  }

  /** See QueueApplyCounts (monitoring: publish and deliver rates). */
  queueApplyCounts(name: string): QueueApplyCounts | undefined {
    const q = this.queues.get(name);
    return q ? { added: q.addedCount, acquisitions: q.acquiredCount } : undefined;
  }

  /** Bytes of every queued message (what a snapshot mostly consists of), without walking the messages. */
  liveBytes(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.byteCount;
    return n;
  }

  listQueues(): QueueInfo[] {
    return [...this.queues.keys()].map((n) => this.queueInfo(n)!);
  }

  /** Seqs a consumer holds (acquired, not yet settled), ascending. */
  acquiredBy(consumer: string): number[] {
    const m = this.consumers.get(consumer);
    return m ? [...m.keys()].sort((a, b) => a - b) : [];
  }

  /**
   * A queue's messages in seq order, acquired ones included, without acquiring them (browsing,
   * management, tests). `message` is the stored bytes: do not mutate.
   */
  browse(
    queue: string,
    limit = Number.POSITIVE_INFINITY,
  ): Array<{ seq: number; message: Uint8Array; acquiredBy?: string }> {
    const q = this.queues.get(queue);
    if (!q) return [];
    const all = q.acquired.toArray();
    for (let m = q.available.head; m; m = m.next) all.push(m);
    all.sort((a, b) => a.seq - b.seq);
    return all
      .slice(0, limit)
      .map((m) =>
        m.owner === undefined
          ? { seq: m.seq, message: m.bytes }
          : { seq: m.seq, message: m.bytes, acquiredBy: m.owner },
      );
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
    const out: Array<{ queue: string; holder?: string; ownerLostAt?: number }> = [];
    for (const q of this.queues.values()) {
      if (q.holder !== undefined) out.push({ queue: q.name, holder: q.holder });
      else if (q.ownerLostAt !== undefined) out.push({ queue: q.name, ownerLostAt: q.ownerLostAt });
    }
    return out;
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
    for (let m = this.queues.get(queue)?.available.head; m; m = m.next) {
      if (m.isExpired(this.now)) continue;
      if (!visit(m.seq, m.bytes, m)) return;
    }
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
    const out: Array<{ seq: number; message: Uint8Array; deliveryCount: number }> = [];
    for (let m = this.queues.get(queue)?.available.head; m && out.length < max; m = m.next) {
      if (m.seq <= afterSeq || m.isExpired(this.now)) continue;
      out.push({ seq: m.seq, message: m.bytes, deliveryCount: m.deliveryCount });
    }
    return out;
  }

  /** Seqs of a queue's available messages in delivery order (for tests and diagnostics). */
  availableSeqs(queue: string): number[] {
    const out: number[] = [];
    for (let m = this.queues.get(queue)?.available.head; m; m = m.next) out.push(m.seq);
    return out;
  }

  // ---- snapshot ----

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

  // ---- event handlers ----

  private declare(e: DeclareQueueEvent): DeclareResult {
    if (this.queues.has(e.queue)) return { type: 'declare', created: false };
    const topic = e.options.subscription?.topic;
    // a subscription's topic exists from its first subscription on
    if (topic !== undefined && !this.queues.has(topic))
      this.queues.set(topic, new Queue(topic, { topic: true }));
    this.addQueue(new Queue(e.queue, e.options));
    return { type: 'declare', created: true };
  }

  /** @internal also used by restore: registers a queue (and a subscription with its topic). */
  addQueue(q: Queue): void {
    this.queues.set(q.name, q);
    const topic = q.options.subscription?.topic;
    if (topic === undefined) return;
    const subs = this.subscriptions.get(topic);
    if (subs) subs.push(q);
    else this.subscriptions.set(topic, [q]);
  }

  private ownerAttached(e: OwnerAttachedEvent): OwnerResult {
    const q = this.queues.get(e.queue);
    if (!q || q.options.temporary === undefined) return { type: 'owner-attached', changed: false };
    q.holder = e.holder;
    q.ownerLostAt = undefined;
    return { type: 'owner-attached', changed: true };
  }

  private ownerLost(e: OwnerLostEvent): OwnerResult {
    const q = this.queues.get(e.queue);
    if (!q || q.holder !== e.holder) return { type: 'owner-lost', changed: false };
    q.holder = undefined;
    q.ownerLostAt = this.now;
    return { type: 'owner-lost', changed: true };
  }

  private deleteQueue(e: DeleteQueueEvent): DeleteResult {
    const name = e.queue;
    const q = this.queues.get(name);
    if (!q || (e.ifOwnerLostAt !== undefined && q.ownerLostAt !== e.ifOwnerLostAt))
      return { type: 'delete', deleted: false, dropped: 0 };
    const dropped = q.messageCount;
    for (const m of q.acquired.toArray()) {
      this.forgetAcquired(m, m.owner!);
      this.retire(m);
    }
    for (let m = q.available.head; m; ) {
      const next = m.next;
      this.retire(m);
      m.prev = m.next = undefined;
      m = next;
    }
    this.queues.delete(name);
    const topic = q.options.subscription?.topic;
    if (topic !== undefined) {
      const rest = this.subscriptions.get(topic)!.filter((s) => s !== q);
      if (rest.length > 0) this.subscriptions.set(topic, rest);
      else this.subscriptions.delete(topic);
    }
    return { type: 'delete', deleted: true, dropped };
  }

  private purge(e: PurgeQueueEvent): PurgeResult {
    const q = this.queues.get(e.queue);
    if (!q) return { type: 'purge', found: false, purged: 0 };
    let purged = 0;
    for (let m = q.available.head; m; ) {
      const next = m.next;
      q.available.remove(m);
      q.uncount(m);
      this.retire(m);
      purged++;
      m = next;
    }
    return { type: 'purge', found: true, purged };
  }

  private enqueue(e: EnqueueEvent, targets?: Queue[]): EnqueueResult {
    const q = this.queues.get(e.queue);
    if (!q) {
      return refused('enqueue', 'amqp:not-found', `no queue ${e.queue}`);
    }
    // admitted now, withdrawn below if refused: one hash operation where has then add took two
    if (e.dedupKey !== undefined && !q.dedup.admit(e.dedupKey, this.now))
      return { type: 'enqueue', status: 'duplicate' };
    if (q.options.topic) return this.publish(q, e, targets ?? this.matchingSubscriptions(q, e.message));
    const full = q.limitExceeded(e.message.length);
    if (full !== undefined) {
      if (e.dedupKey !== undefined) q.dedup.withdraw(e.dedupKey);
      return refused('enqueue', 'amqp:resource-limit-exceeded', full);
    }
    const m = this.newMessage(q, this.keep(e.message, q.arena), e.expiresAt ?? -1, e.deliveryCount ?? 0);
    q.add(m);
    return { type: 'enqueue', status: 'enqueued', seq: m.seq };
  }

  /** The subscriptions of topic `t` whose selectors take `message` (each evaluated once). */
  private matchingSubscriptions(t: Queue, message: Uint8Array): Queue[] {
    return (this.subscriptions.get(t.name) ?? []).filter((s) => s.accepts(message));
  }

  /**
   * One publish to a topic: a message in every matching subscription, all sharing one copy of
   * the bytes; refused as a whole when any of them is full (docs/topics.md#commit-point). Its
   * dedup key, if any, is already admitted to the topic's window (withdrawn when refused).
   */
  private publish(t: Queue, e: EnqueueEvent, targets: Queue[]): EnqueueResult {
    for (const s of targets) {
      const full = s.limitExceeded(e.message.length);
      if (full === undefined) continue;
      if (e.dedupKey !== undefined) t.dedup.withdraw(e.dedupKey);
      return refused('enqueue', 'amqp:resource-limit-exceeded', full);
    }
    let first = 0;
    const bytes = targets.length > 0 ? this.publishedBytes(t, targets, e.message) : undefined;
    for (const s of targets) {
      const m = this.newMessage(s, bytes!, e.expiresAt ?? -1, e.deliveryCount ?? 0);
      if (first === 0) first = m.seq;
      s.add(m);
    }
    t.addedCount++;
    return { type: 'enqueue', status: 'enqueued', seq: first, fannedOut: targets.map((s) => s.name) };
  }

  /**
   * Where a publish's one copy goes (docs/architecture.md#message-memory): into the topic's
   * chunks when every subscription takes it (then all messages in those chunks have the same
   * holders, so a chunk is freed once all of them consumed it), into the one subscription's when a
   * selector left one, else a copy of its own (a chunk shared by messages with different holders
   * would stay alive as long as the slowest holder of any of them).
   */
  private publishedBytes(t: Queue, targets: Queue[], message: Uint8Array): StoredBytes {
    if (targets.length === 1) return this.keep(message, targets[0]!.arena);
    if (targets.length === (this.subscriptions.get(t.name)?.length ?? 0)) return this.keep(message, t.arena);
    return this.keep(message, undefined);
  }

  /** An enqueued message's bytes as kept: a view (EntryViews), else a copy into `arena` or of its own. */
  private keep(message: Uint8Array, arena: ByteArena | undefined): StoredBytes {
    if (this.views !== undefined) return this.views.keep(message, arena);
    return storeCopy(message, arena);
  }

  /** @internal also used by restore */
  newMessage(
    q: Queue,
    bytes: StoredBytes,
    expiresAt: number,
    deliveryCount: number,
    seq = this.nextSeq++,
  ): QueuedMessage {
    const m = new QueuedMessage(q, seq, bytes, expiresAt, deliveryCount);
    if (expiresAt >= 0) this.expiry.push(m);
    return m;
  }

  private commit(e: CommitEvent): CommitResult {
    // all or nothing: check every enqueue fits before applying any
    const adding = new Map<Queue, { n: number; bytes: number }>();
    // a publish's subscriptions, chosen once (one selector evaluation per message)
    const fanOut = new Map<EnqueueEvent, Queue[]>();
    for (const sub of e.events) {
      if (sub.type !== 'enqueue') continue;
      const q = this.queues.get(sub.queue);
      if (!q) {
        return refused('commit', 'amqp:not-found', `no queue ${sub.queue}`);
      }
      if (sub.dedupKey !== undefined && q.dedup.has(sub.dedupKey, this.now)) continue;
      let into = [q];
      if (q.options.topic) {
        into = this.matchingSubscriptions(q, sub.message);
        fanOut.set(sub, into);
      }
      for (const target of into) {
        const a = adding.get(target) ?? { n: 0, bytes: 0 };
        a.n++;
        a.bytes += sub.message.length;
        adding.set(target, a);
      }
    }
    for (const [q, a] of adding) {
      const { maxMessages, maxBytes } = q.resolved;
      if (q.messageCount + a.n > maxMessages || q.byteCount + a.bytes > maxBytes) {
        return refused(
          'commit',
          'amqp:resource-limit-exceeded',
          `queue ${q.name} cannot take the transaction's ${a.n} messages`,
        );
      }
    }
    const results = e.events.map((sub) =>
      sub.type === 'enqueue'
        ? this.enqueue({ ...sub, leaderTime: e.leaderTime }, fanOut.get(sub))
        : this.settle({ ...sub, leaderTime: e.leaderTime }),
    );
    return { type: 'commit', status: 'committed', results };
  }

  private acquire(e: AcquireEvent): AcquireResult {
    const messages: AcquiredMessage[] = [];
    const q = this.queues.get(e.queue);
    if (!q) return { type: 'acquire', messages };
    const wanted = e.seqs === undefined ? undefined : new Set(e.seqs);
    const last = e.seqs === undefined ? 0 : e.seqs[e.seqs.length - 1]!;
    const max = wanted ? wanted.size : (e.max ?? 1);
    const link = e.link ?? e.consumer;
    // what the consumer holds: looked up once per acquire, not once per message
    let held: Map<number, QueuedMessage> | undefined;
    let m = q.available.head;
    while (m !== undefined && messages.length < max) {
      const next = m.next;
      if (wanted) {
        // the list is in seq order: nothing wanted lies beyond the last seq asked for
        if (m.seq > last) break;
        if (!wanted.has(m.seq)) {
          m = next;
          continue;
        }
      }
      if (m.isExpired(this.now)) {
        q.available.remove(m);
        q.uncount(m);
        this.retire(m);
      } else if (m.reservedAgainst(link, this.now)) {
        // held for the link that had it when it went away: skipped, like an undeliverable one
      } else if (m.undeliverable === undefined || !m.undeliverable.includes(link)) {
        q.available.remove(m);
        this.unreserve(q, m);
        held ??= this.heldBy(e.consumer);
        messages.push(this.takeFor(q, m, e.consumer, held));
      }
      m = next;
    }
    return { type: 'acquire', messages };
  }

  private takeFor(
    q: Queue,
    m: QueuedMessage,
    consumer: string,
    held: Map<number, QueuedMessage>,
  ): AcquiredMessage {
    const firstAcquirer = !m.acquiredBefore;
    m.acquiredBefore = true;
    q.acquiredCount++;
    this.hold(q, m, consumer, held);
    const out: AcquiredMessage = {
      seq: m.seq,
      queue: q.name,
      message: m.bytes,
      deliveryCount: m.deliveryCount,
      firstAcquirer,
    };
    if (m.deadLetter) out.deadLetter = m.deadLetter;
    return out;
  }

  /** @internal registers an acquired message restored from a snapshot */
  restoreAcquired(q: Queue, m: QueuedMessage, consumer: string): void {
    this.hold(q, m, consumer, this.heldBy(consumer));
  }

  /** The messages `consumer` holds (created empty when it holds none). */
  private heldBy(consumer: string): Map<number, QueuedMessage> {
    let held = this.consumers.get(consumer);
    if (!held) {
      held = new Map();
      this.consumers.set(consumer, held);
    }
    return held;
  }

  /** `consumer` holds `m` (acquired, not settled); `held` is heldBy(consumer). */
  private hold(q: Queue, m: QueuedMessage, consumer: string, held: Map<number, QueuedMessage>): void {
    m.owner = consumer;
    q.acquired.pushBack(m);
    held.set(m.seq, m);
  }

  /** Ends a message's life; `popped` when its expiry-heap entry was already removed. */
  private retire(m: QueuedMessage, popped = false): void {
    if (!m.live) return;
    this.unreserve(m.queue, m);
    if (m.expiresAt >= 0 && !popped) this.expiry.noteDead();
    m.kill();
  }

  /** `m` is no longer held by `consumer`; `held` is what it holds, when the caller has it at hand. */
  private forgetAcquired(m: QueuedMessage, consumer: string, held = this.consumers.get(consumer)): Queue {
    const q = m.queue;
    q.acquired.remove(m);
    if (held) {
      held.delete(m.seq);
      if (held.size === 0) this.consumers.delete(consumer);
    }
    return q;
  }

  private settle(e: SettleEvent): SettleResult {
    const result: SettleResult = { type: 'settle', settled: [], stale: [], deadLettered: [] };
    const held = this.consumers.get(e.consumer);
    for (const seq of e.seqs) {
      const m = held?.get(seq);
      if (m === undefined) {
        result.stale.push(seq);
        continue;
      }
      const q = this.forgetAcquired(m, e.consumer, held);
      m.owner = undefined;
      result.settled.push(seq);
      const o = e.outcome;
      switch (o.type) {
        case 'accepted':
          q.uncount(m);
          this.retire(m);
          break;
        case 'rejected': {
          q.uncount(m);
          const moved = this.deadLetter(q, m, o.error);
          if (moved) result.deadLettered.push(moved);
          this.retire(m);
          break;
        }
        case 'released':
          this.makeAvailable(q, m);
          break;
        case 'modified':
          // on a queue with a delivery limit (poison handling on), undeliverable-here marks a
          // poison message: dead-lettered at once, as RabbitMQ 4 does; elsewhere it keeps the
          // spec's meaning, never again to that link (a federation link leaving a message upstream
          // relies on it) (docs/broker-features.md#delivery-limit)
          if (o.undeliverableHere && Number.isFinite(q.resolved.deliveryLimit)) {
            q.uncount(m);
            const moved = this.deadLetter(q, m, UNDELIVERABLE_HERE_ERROR);
            if (moved) result.deadLettered.push(moved);
            this.retire(m);
            break;
          }
          if (o.undeliverableHere) {
            const link = e.link ?? e.consumer;
            if (m.undeliverable === undefined) m.undeliverable = [link];
            else if (!m.undeliverable.includes(link)) m.undeliverable.push(link);
          }
          if (o.deliveryFailed) this.deliveryFailed(q, m, result.deadLettered);
          else this.makeAvailable(q, m);
          break;
      }
    }
    return result;
  }

  /**
   * A delivery of `m` failed (its link or connection was lost before settling it, or it came back
   * modified with delivery-failed): delivery-count + 1, then back to the queue, or to the
   * dead-letter queue once the count reaches the queue's delivery limit
   * (docs/broker-features.md#delivery-limit). True when it is available again.
   */
  private deliveryFailed(q: Queue, m: QueuedMessage, deadLettered: DeadLettered[]): boolean {
    m.deliveryCount++;
    const limit = q.resolved.deliveryLimit;
    if (m.deliveryCount < limit || m.isExpired(this.now)) return this.makeAvailable(q, m);
    q.uncount(m);
    const moved = this.deadLetter(q, m, {
      condition: DELIVERY_LIMIT_CONDITION,
      description: `delivered ${m.deliveryCount} times (delivery limit ${limit})`,
    });
    if (moved) deadLettered.push(moved);
    this.retire(m);
    return false;
  }

  /** Back to available at its FIFO position, unless its deadline passed meanwhile (then dropped). */
  private makeAvailable(q: Queue, m: QueuedMessage): boolean {
    if (m.isExpired(this.now)) {
      q.uncount(m);
      this.retire(m);
      return false;
    }
    q.available.insertBySeq(m);
    return true;
  }

  /**
   * Moves a rejected message's bytes into the queue's dead-letter queue as a new message (new
   * seq, no expiry, delivery-count kept), auto-declaring the DLQ (with no DLQ of its own). Dropped
   * when the queue has no DLQ or the DLQ is full.
   */
  private deadLetter(
    from: Queue,
    m: QueuedMessage,
    error: { condition: string; description?: string } | undefined,
  ): DeadLettered | undefined {
    const dlqName = from.resolved.deadLetterQueue;
    if (dlqName === null) return undefined;
    let dlq = this.queues.get(dlqName);
    if (!dlq) {
      dlq = new Queue(dlqName, { deadLetterQueue: null });
      this.queues.set(dlqName, dlq);
    }
    if (dlq.limitExceeded(m.size) !== undefined) return undefined;
    // a copy in the DLQ's own chunks: a long-lived DLQ must not pin its source queue's chunks
    const moved = this.newMessage(dlq, dlq.arena.store(m.bytes), -1, m.deliveryCount);
    moved.acquiredBefore = m.acquiredBefore;
    moved.deadLetter = error ? { fromQueue: from.name, error: { ...error } } : { fromQueue: from.name };
    dlq.add(moved);
    return { seq: m.seq, queue: dlqName, newSeq: moved.seq };
  }

  /**
   * What `consumer` held goes back (its link or connection is gone): each is a failed delivery
   * (delivery-count + 1; past the delivery limit, dead-lettered into `deadLettered`).
   */
  private releaseConsumer(consumer: string, deadLettered: DeadLettered[]): number[] {
    const held = this.consumers.get(consumer);
    const released = held ? this.releaseHeld([...held.values()], deadLettered) : [];
    this.holds.delete(consumer);
    return released;
  }

  /**
   * Gives back acquired messages, in seq order (so dead-letter seqs do not depend on which
   * consumer held what); a message whose holder asked for a hold is reserved for that link.
   * Returns the seqs available again, ascending.
   */
  private releaseHeld(messages: QueuedMessage[], deadLettered: DeadLettered[]): number[] {
    const released: number[] = [];
    messages.sort((a, b) => a.seq - b.seq);
    for (const m of messages) {
      const consumer = m.owner!;
      const hold = this.holds.get(consumer);
      const q = this.forgetAcquired(m, consumer);
      m.owner = undefined;
      if (!this.deliveryFailed(q, m, deadLettered)) continue;
      released.push(m.seq);
      if (hold !== undefined) {
        m.reservation = { link: hold.link, until: this.now + hold.ms };
        q.reserved.add(m);
      }
    }
    return released;
  }

  private holdUnsettled(e: HoldUnsettledEvent): HoldResult {
    if (e.ms > 0) this.holds.set(e.consumer, { link: e.link, ms: e.ms });
    else this.holds.delete(e.consumer);
    return { type: 'hold-unsettled' };
  }

  private unreserve(q: Queue, m: QueuedMessage): void {
    if (m.reservation === undefined) return;
    m.reservation = undefined;
    q.reserved.delete(m);
  }

  /**
   * When the first reservation in `queue` that keeps `link` from a message lapses (leader time),
   * or undefined: a consumer that got fewer messages than it asked for tries again then.
   */
  reservationLapse(queue: string, link: string): number | undefined {
    const q = this.queues.get(queue);
    if (q === undefined) return undefined;
    let first: number | undefined;
    for (const m of q.reserved) {
      const r = m.reservation;
      if (r === undefined || r.link === link || r.until <= this.now) continue;
      if (first === undefined || r.until < first) first = r.until;
    }
    return first;
  }

  private expire(): ExpireResult {
    const expired: number[] = [];
    for (
      let top = this.expiry.peek();
      top !== undefined && top.expiresAt <= this.now;
      top = this.expiry.peek()
    ) {
      this.expiry.pop();
      if (!top.live) this.expiry.deadPopped();
      // Acquired messages are judged again when they come back (makeAvailable).
      if (!top.live || top.owner !== undefined) continue;
      const q = top.queue;
      q.available.remove(top);
      q.uncount(top);
      this.retire(top, true);
      expired.push(top.seq);
    }
    for (const q of this.queues.values()) q.dedup.trim(this.now);
    expired.sort((a, b) => a - b);
    return { type: 'expire', expired };
  }
}

/** The dead-letter error of a message that reached its queue's delivery limit. */
export const DELIVERY_LIMIT_CONDITION = 'quorate:delivery-limit';

/** Why a message modified with undeliverable-here on a queue with a delivery limit was dead-lettered. */
const UNDELIVERABLE_HERE_ERROR = {
  condition: 'quorate:undeliverable-here',
  description: 'modified with undeliverable-here',
} as const;

/** A message moved to a dead-letter queue: its seq, the DLQ and its seq there. */
type DeadLettered = { seq: number; queue: string; newSeq: number };

function releaseResult(
  type: ReleaseResult['type'],
  released: number[],
  deadLettered: DeadLettered[],
): ReleaseResult {
  return deadLettered.length > 0 ? { type, released, deadLettered } : { type, released };
}

/** An enqueue (alone, or in a transaction) that is not applied, and why. */
function refused<T extends 'enqueue' | 'commit'>(
  type: T,
  condition: string,
  description: string,
): { type: T; status: 'refused'; condition: string; description: string } {
  return { type, status: 'refused', condition, description };
}
