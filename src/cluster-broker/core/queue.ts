/** One queue's contents: available list, acquired set, byte/message counts, dedup window. */

import { Selector, SelectorError } from '../selector/index.js';
import { ByteArena } from './byte-arena.js';
import { DedupWindow } from './dedup-window.js';
import {
  DEFAULT_DEDUP_WINDOW_COUNT,
  DEFAULT_DEDUP_WINDOW_MS,
  DLQ_SUFFIX,
  type QueueOptions,
} from './events.js';
import { MessageList, type QueuedMessage } from './queued-message.js';

export interface ResolvedQueueOptions {
  maxMessages: number;
  maxBytes: number;
  deadLetterQueue: string | null;
  dedupWindowCount: number;
  dedupWindowMs: number;
  /** Deliveries after which a message is dead-lettered; Infinity: no limit. */
  deliveryLimit: number;
}

export function resolveQueueOptions(name: string, o: QueueOptions): ResolvedQueueOptions {
  let dlq: string | null;
  if (o.deadLetterQueue === undefined) dlq = name.endsWith(DLQ_SUFFIX) ? null : name + DLQ_SUFFIX;
  else dlq = o.deadLetterQueue;
  if (dlq === name) dlq = null;
  return {
    maxMessages: o.maxMessages ?? Number.POSITIVE_INFINITY,
    maxBytes: o.maxBytes ?? Number.POSITIVE_INFINITY,
    deadLetterQueue: dlq,
    dedupWindowCount: o.dedupWindowCount ?? DEFAULT_DEDUP_WINDOW_COUNT,
    dedupWindowMs: o.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS,
    deliveryLimit: o.deliveryLimit ?? Number.POSITIVE_INFINITY,
  };
}

export class Queue {
  readonly available = new MessageList();
  /**
   * Acquired messages, in acquisition order (not observable: its readers sort by seq). A list
   * through the messages themselves, not a map by seq: an acquisition and a settlement then cost
   * two pointer updates here, no hash-table entry (settle finds a message through its consumer's
   * map, settle.ts).
   */
  readonly acquired = new MessageList();
  messageCount = 0;
  byteCount = 0;
  /**
   * Diagnostics, not part of the snapshot (they restart from 0 on restore): messages added
   * (enqueued or dead-lettered into it) and acquisitions (deliveries, redeliveries included)
   * applied since this state started. Every cluster member applies every event, so these are
   * the cluster's counts on any member.
   */
  addedCount = 0;
  acquiredCount = 0;
  readonly dedup: DedupWindow;
  /** The chunks its messages' bytes are copied into (a topic's: shared by its subscriptions). */
  readonly arena = new ByteArena();
  readonly resolved: ResolvedQueueOptions;
  /**
   * A temporary queue's owner (docs/topics.md#owner-gone): the process its owner link is attached
   * on, and since when (leader time) the owner is lost; part of the snapshot.
   */
  holder: string | undefined = undefined;
  ownerLostAt: number | undefined = undefined;
  /** Its available messages that carry a reservation (few: what links in flight held when they went away). */
  readonly reserved = new Set<QueuedMessage>();
  /** A subscription's selector, compiled at first use (null: none, or one that cannot compile). */
  private compiled: Selector | null | undefined;

  constructor(
    readonly name: string,
    /** The options exactly as declared (what snapshots record). */
    readonly options: QueueOptions,
  ) {
    this.resolved = resolveQueueOptions(name, options);
    this.dedup = new DedupWindow(this.resolved.dedupWindowCount, this.resolved.dedupWindowMs);
  }

  /** A refusal description if one more message of `size` bytes would exceed a limit. */
  limitExceeded(size: number): string | undefined {
    const { maxMessages, maxBytes } = this.resolved;
    if (this.messageCount + 1 > maxMessages)
      return `queue ${this.name} is full (max-messages ${maxMessages})`;
    if (this.byteCount + size > maxBytes) return `queue ${this.name} is full (max-bytes ${maxBytes})`;
    return undefined;
  }

  /**
   * Whether a message published to this subscription's topic belongs in it: one selector
   * evaluation per message (a selector that does not compile matches nothing; the attach refused it).
   */
  accepts(bytes: Uint8Array): boolean {
    const text = this.options.subscription?.selector;
    if (text === undefined) return true;
    if (this.compiled === undefined) {
      try {
        this.compiled = new Selector(text);
      } catch (err) {
        if (!(err instanceof SelectorError)) throw err;
        this.compiled = null;
      }
    }
    return this.compiled?.matches(bytes) === true;
  }

  /** The compiled selector (diagnostics: evaluations count), once a message was offered. */
  get selector(): Selector | undefined {
    return this.compiled ?? undefined;
  }

  /** Adds a new message (already counted nowhere) at the tail. */
  add(m: QueuedMessage): void {
    this.available.pushBack(m);
    this.messageCount++;
    this.addedCount++;
    this.byteCount += m.size;
  }

  /** Removes a message from the counts (the caller unlinked it from available/acquired). */
  uncount(m: QueuedMessage): void {
    this.messageCount--;
    this.byteCount -= m.size;
    if (this.messageCount === 0) this.arena.reset();
  }
}
