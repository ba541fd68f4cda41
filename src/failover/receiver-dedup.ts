/**
 * Per-receiver duplicate suppression by message-id (docs/delivery-contract.md#receiver-dedup).
 *
 * A receiver never hands its application the same message-id twice within the window:
 * - an id the application accepted or rejected: settle the redelivery again with that outcome,
 *   do not hand it out;
 * - an id it released or modified: forgotten, so the redelivery is handed out again;
 * - an id that is buffered or handed out and not yet settled: bind the redelivery to that
 *   pending delivery (the client settles it with whatever the application decides for the
 *   original);
 * - no message-id: no dedup.
 * Remembered settled ids are bounded by count and by age (time passed in, same clock always).
 * Keys are canonical (type and value): string 'a', symbol 'a' and binary 0x61 differ
 * (receiverDedupKey).
 *
 * `T` is the client's token for a pending delivery (whatever it needs to settle it later).
 * onDelivery takes the message-id and, for a delivery to hand out, returns its place in the window
 * (a DedupSlot: the entry itself, no object allocated for the answer); the later calls for that
 * delivery take the slot back, so its id is keyed and looked up once per delivery, not once per
 * call. They take a plain key as well (looked up then).
 */
import type { DeliveryState } from '../codec/contract.js';
import { messageIdKey } from '../codec/message-id.js';

export interface ReceiverDedupOptions {
  /** settled ids remembered, default 10,000 */
  maxIds?: number;
  /** how long a settled id is remembered after it was last seen (ms), default 10 min */
  maxAgeMs?: number;
}

/** Outcomes that end a message's life at the broker: a redelivery is settled again, not handed out. */
export type FinalOutcome = Extract<DeliveryState, { type: 'accepted' } | { type: 'rejected' }>;

/**
 * The answer to hand a delivery out, and its place in the window for the later calls (onHandedOut,
 * onSettled, forgetPending); `key` is undefined when it has no id.
 */
export interface DedupSlot {
  readonly action: 'deliver';
  readonly key: string | undefined;
}

/** A delivery's place in the window (from onDelivery), or its key. */
export type DedupRef = DedupSlot | string | undefined;

/** The answer for a message without a message-id: shared, nothing to remember. */
const NO_ID: DedupSlot = Object.freeze({ action: 'deliver', key: undefined });

export type DedupDecision<T> =
  /** hand it to the application (after calling onHandedOut with it) */
  | DedupSlot
  /** do not hand out: settle this transfer with `outcome` now */
  | { action: 'settle'; key: string; outcome: FinalOutcome }
  /** do not hand out: settle this transfer together with the pending delivery `pending` */
  | { action: 'bind'; key: string; pending: T; handedOut: boolean };

/**
 * One id, pending (buffered or handed out, `outcome` undefined) or remembered (settled with a
 * final outcome). One Map holds both: a delivery's life is one entry, looked up by one key.
 */
interface Entry<T> extends DedupSlot {
  readonly action: 'deliver';
  readonly key: string;
  /** still the entry for its key (an entry forgotten is never put back: a new one is made) */
  inMap: boolean;
  token: T | undefined;
  handedOut: boolean;
  outcome: FinalOutcome | undefined;
  /** when it was last touched (remembered entries) */
  at: number;
  /** its index in the eviction order while remembered; -1 when pending */
  slot: number;
}

/**
 * A transactional outcome is not final: it takes effect only if its transaction commits (the
 * client reports the plain outcome then), and after a rollback the redelivery is handed out again.
 */
function finalOutcome(outcome: DeliveryState): FinalOutcome | undefined {
  if (outcome.type === 'accepted' || outcome.type === 'rejected') return outcome;
  return undefined;
}

/**
 * The key this receiver remembers an id by. A string id (the common case: every id the quorate
 * client assigns) is its own key, so the decoded string is hashed as it is, with no key built per
 * delivery; any other id (and a string that happens to start with NUL) is NUL followed by its
 * canonical typed key, which no plain string key starts with, so string 'a', symbol 'a' and
 * binary 0x61 still differ.
 */
export function receiverDedupKey(id: unknown): string | undefined {
  if (typeof id === 'string' && id.charCodeAt(0) !== 0) return id;
  const canonical = messageIdKey(id);
  return canonical === undefined ? undefined : `\u0000${canonical}`;
}

export class ReceiverDedup<T = unknown> {
  readonly maxIds: number;
  readonly maxAgeMs: number;
  private readonly entries = new Map<string, Entry<T>>();
  private remembered = 0;
  /**
   * Remembered entries in order of last touch, oldest first, from `head`; a slot whose entry has
   * moved on (touched again, now at a later slot, or pending again) is stale and skipped.
   * Eviction pops from here rather than iterating the Map from its start: a Map keeps deleted
   * entries as holes until it rehashes, so each such iteration would first walk past every id
   * already evicted.
   */
  private order: Entry<T>[] = [];
  private head = 0;

  constructor(options: ReceiverDedupOptions = {}) {
    this.maxIds = Math.max(0, options.maxIds ?? 10_000);
    this.maxAgeMs = Math.max(0, options.maxAgeMs ?? 600_000);
  }

  /** Settled ids remembered now. */
  get rememberedCount(): number {
    return this.remembered;
  }
  /** Ids buffered or handed out, not yet settled. */
  get pendingCount(): number {
    return this.entries.size - this.remembered;
  }

  /** A transfer arrived with this message-id. `token` identifies it if it becomes the pending one. */
  onDelivery(messageId: unknown, token: T, now: number): DedupDecision<T> {
    const key = receiverDedupKey(messageId);
    if (key === undefined) return NO_ID;
    this.prune(now);
    const e = this.entries.get(key);
    if (e === undefined) return this.add(key, token, false, undefined, now);
    if (e.outcome === undefined)
      return { action: 'bind', key, pending: e.token as T, handedOut: e.handedOut };
    // seen again: the broker still has it, so remember it for a full window from now
    e.at = now;
    this.touch(e);
    return { action: 'settle', key, outcome: e.outcome };
  }

  /** The delivery with this slot (from onDelivery) or key was handed to the application. */
  onHandedOut(ref: DedupRef, token: T): void {
    const key = keyOf(ref);
    if (key === undefined) return;
    const e = this.find(ref, key);
    if (e === undefined) {
      this.add(key, token, true, undefined, 0);
    } else if (e.outcome === undefined) {
      e.handedOut = true;
    }
  }

  /**
   * The application settled the delivery with this key (call when it settles, not when the
   * broker confirms: an accept in doubt must still suppress the redelivery). accepted/rejected
   * are remembered; released, modified and anything else are forgotten so a redelivery is
   * handed out again.
   */
  onSettled(ref: DedupRef, outcome: DeliveryState, now: number): void {
    const key = keyOf(ref);
    if (key === undefined) return;
    const final = finalOutcome(outcome);
    const e = this.find(ref, key);
    if (final === undefined) {
      if (e !== undefined) this.forget(e);
    } else if (e === undefined) {
      this.remembered++;
      this.touch(this.add(key, undefined, false, final, now));
    } else {
      if (e.outcome === undefined) this.remembered++;
      e.outcome = final;
      e.token = undefined;
      e.at = now;
      this.touch(e);
    }
    this.prune(now);
  }

  /**
   * The connection died: deliveries buffered but not handed out are dropped by the client (the
   * broker offers them again), so forget them. Handed-out ones stay pending. Returns how many.
   */
  connectionLost(): number {
    let dropped = 0;
    for (const e of this.entries.values()) {
      if (e.outcome === undefined && !e.handedOut) {
        this.entries.delete(e.key);
        e.inMap = false;
        dropped++;
      }
    }
    return dropped;
  }

  /** Drop a pending id (by its slot or key) without an outcome (e.g. the receiver closed with it buffered). */
  forgetPending(ref: DedupRef): void {
    const key = keyOf(ref);
    if (key === undefined) return;
    const e = this.find(ref, key);
    if (e !== undefined && e.outcome === undefined) this.forget(e);
  }

  /** Evict settled ids older than maxAgeMs, then the oldest beyond maxIds. */
  prune(now: number): void {
    const order = this.order;
    while (this.head < order.length) {
      const e = order[this.head]!;
      if (e.slot === this.head) {
        if (now - e.at < this.maxAgeMs && this.remembered <= this.maxIds) break;
        this.forget(e);
      }
      this.head++;
    }
    // drop the consumed prefix once it is most of the array (amortised O(1) per entry)
    if (this.head > 1024 && this.head * 2 > order.length) this.compact();
  }

  /** A remembered entry was touched now: it becomes the newest in the eviction order. */
  private touch(e: Entry<T>): void {
    e.slot = this.order.length;
    this.order.push(e);
    if (this.order.length - this.head > 2 * this.remembered + 1024) this.compact();
  }

  /** The entry for `ref`: the slot itself while it is still in the window, else looked up by key. */
  private find(ref: DedupRef, key: string): Entry<T> | undefined {
    if (typeof ref === 'object') {
      const e = ref as Entry<T>;
      if (e.inMap) return e;
    }
    return this.entries.get(key);
  }

  private add(
    key: string,
    token: T | undefined,
    handedOut: boolean,
    outcome: FinalOutcome | undefined,
    at: number,
  ): Entry<T> {
    const e: Entry<T> = { action: 'deliver', key, inMap: true, token, handedOut, outcome, at, slot: -1 };
    this.entries.set(key, e);
    return e;
  }

  private forget(e: Entry<T>): void {
    this.entries.delete(e.key);
    e.inMap = false;
    if (e.outcome !== undefined) this.remembered--;
    e.slot = -1;
  }

  /** Keep only the live slots of the eviction order (renumbered from 0). */
  private compact(): void {
    const kept: Entry<T>[] = [];
    for (let i = this.head; i < this.order.length; i++) {
      const e = this.order[i]!;
      if (e.slot === i) {
        e.slot = kept.length;
        kept.push(e);
      }
    }
    this.order = kept;
    this.head = 0;
  }
}

function keyOf(ref: DedupRef): string | undefined {
  return typeof ref === 'object' ? ref.key : ref;
}
