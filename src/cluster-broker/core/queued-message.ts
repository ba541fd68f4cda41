/**
 * One message held by a queue, and the seq-ordered list of available messages.
 *
 * Memory matters (target <= 1.2 KiB per queued 1 KiB message, docs/architecture.md#message-memory):
 * one small object per message with a fixed shape and as few fields as possible (each costs 8 B):
 * the bytes are a place in a chunk shared with other messages (byte-arena.ts), list links are
 * inside the object (no per-message Map or array, available or acquired), the two flags and the delivery-count share one
 * field and the rarely set fields (expiry, undeliverable-here, dead-letter origin) one object.
 */
import { type StoredBytes, sizeOf, viewOf, WHOLE_CHUNK } from './byte-arena.js';
import type { Queue } from './queue.js';
import type { DeadLetterInfo } from './results.js';

const EMPTY = new Uint8Array(0);
const LIVE = 1;
const ACQUIRED_BEFORE = 2;
/** `state` holds the two flags in its low bits and the delivery-count above them. */
const COUNT_UNIT = 4;

/** What few messages carry: the fields behind `expiresAt`, `undeliverable`, `deadLetter` and `reservation`. */
interface Rare {
  expiresAt: number;
  undeliverable: string[] | undefined;
  deadLetter: DeadLetterInfo | undefined;
  reservation: Reservation | undefined;
}

/** Held for one link identity until a leader time (docs/delivery-contract.md#held-unsettled). */
export interface Reservation {
  link: string;
  until: number;
}

function rare(expiresAt: number): Rare {
  return { expiresAt, undeliverable: undefined, deadLetter: undefined, reservation: undefined };
}

export class QueuedMessage implements StoredBytes {
  /** Broker-wide sequence number, assigned at enqueue in log order. */
  readonly seq: number;
  /** The queue holding it (a pointer, so expiry and settle find it in O(1)). */
  readonly queue: Queue;
  /** The chunk holding its bytes, and where in it (see StoredBytes; shared by a topic's subscriptions). */
  chunk: Uint8Array;
  at: number;
  /** LIVE and ACQUIRED_BEFORE, plus delivery-count x COUNT_UNIT (exact: a uint32 count x 4 < 2^53). */
  private state: number;
  /** Consumer key holding it, or undefined while available. */
  owner: string | undefined = undefined;
  private rare: Rare | undefined = undefined;
  prev: QueuedMessage | undefined = undefined;
  next: QueuedMessage | undefined = undefined;

  constructor(queue: Queue, seq: number, bytes: StoredBytes, expiresAt: number, deliveryCount: number) {
    this.queue = queue;
    this.seq = seq;
    this.chunk = bytes.chunk;
    this.at = bytes.at;
    this.state = LIVE + deliveryCount * COUNT_UNIT;
    if (expiresAt >= 0) this.rare = rare(expiresAt);
  }

  /** Expiry deadline in leader time, or -1 for none (fixed at enqueue). */
  get expiresAt(): number {
    return this.rare?.expiresAt ?? -1;
  }

  get deliveryCount(): number {
    return Math.floor(this.state / COUNT_UNIT);
  }
  set deliveryCount(n: number) {
    this.state = (this.state % COUNT_UNIT) + n * COUNT_UNIT;
  }

  /** The encoded message (a view into its chunk: no copy). */
  get bytes(): Uint8Array {
    return viewOf(this);
  }

  /** Its byte length (without making a view). */
  get size(): number {
    return sizeOf(this);
  }

  /** Some link acquired this message before (so first-acquirer is false from now on). */
  get acquiredBefore(): boolean {
    return ((this.state % COUNT_UNIT) & ACQUIRED_BEFORE) !== 0;
  }
  set acquiredBefore(v: boolean) {
    if (v !== this.acquiredBefore) this.state += v ? ACQUIRED_BEFORE : -ACQUIRED_BEFORE;
  }

  /** False once accepted, dropped, dead-lettered, expired or its queue deleted. */
  get live(): boolean {
    return ((this.state % COUNT_UNIT) & LIVE) !== 0;
  }

  /** Consumer keys it must never be offered to again (modified{undeliverableHere}). */
  get undeliverable(): string[] | undefined {
    return this.rare?.undeliverable;
  }
  set undeliverable(v: string[] | undefined) {
    if (v === undefined && this.rare === undefined) return;
    this.rare ??= rare(-1);
    this.rare.undeliverable = v;
  }

  get deadLetter(): DeadLetterInfo | undefined {
    return this.rare?.deadLetter;
  }
  set deadLetter(v: DeadLetterInfo | undefined) {
    if (v === undefined && this.rare === undefined) return;
    this.rare ??= rare(-1);
    this.rare.deadLetter = v;
  }

  /**
   * Set while the message waits, available, for the link that held it when that link went away
   * (only that link may acquire it until `until`); undefined otherwise.
   */
  get reservation(): Reservation | undefined {
    return this.rare?.reservation;
  }
  set reservation(v: Reservation | undefined) {
    if (v === undefined && this.rare === undefined) return;
    this.rare ??= rare(-1);
    this.rare.reservation = v;
  }

  /** May `link` acquire it at leader time `now` (not reserved for another link)? */
  reservedAgainst(link: string, now: number): boolean {
    const r = this.rare?.reservation;
    return r !== undefined && r.link !== link && r.until > now;
  }

  isExpired(now: number): boolean {
    const at = this.expiresAt;
    return at >= 0 && at <= now;
  }

  /** Marks it gone and lets its chunk be collected even if an expiry-heap entry still points here. */
  kill(): void {
    if (this.live) this.state -= LIVE;
    this.chunk = EMPTY;
    this.at = WHOLE_CHUNK;
    this.owner = undefined;
  }
}

/**
 * A list of one queue's messages threaded through the messages' own `prev`/`next` (a message is in
 * at most one list at a time: its queue's available list, or its acquired list): O(1) at both ends
 * and for unlinking, and no allocation per message. The available list is in ascending seq order;
 * the acquired list in acquisition order (its readers sort).
 */
export class MessageList {
  head: QueuedMessage | undefined = undefined;
  tail: QueuedMessage | undefined = undefined;
  size = 0;

  pushBack(m: QueuedMessage): void {
    m.next = undefined;
    m.prev = this.tail;
    if (this.tail) this.tail.next = m;
    else this.head = m;
    this.tail = m;
    this.size++;
  }

  /**
   * Puts a message back at its seq position (a release keeps FIFO order). Walks from the head:
   * the cost is the number of available messages older than it, usually few (they are other
   * recent redeliveries), since older ones were acquired first.
   */
  insertBySeq(m: QueuedMessage): void {
    if (this.tail === undefined || this.tail.seq < m.seq) {
      this.pushBack(m);
      return;
    }
    let at = this.head;
    while (at !== undefined && at.seq < m.seq) at = at.next;
    // at is defined here: tail.seq > m.seq
    const before = at!;
    m.next = before;
    m.prev = before.prev;
    if (before.prev) before.prev.next = m;
    else this.head = m;
    before.prev = m;
    this.size++;
  }

  /** Its messages in list order, as an array (a caller may then change the list). */
  toArray(): QueuedMessage[] {
    const out: QueuedMessage[] = [];
    for (let m = this.head; m; m = m.next) out.push(m);
    return out;
  }

  remove(m: QueuedMessage): void {
    if (m.prev) m.prev.next = m.next;
    else this.head = m.next;
    if (m.next) m.next.prev = m.prev;
    else this.tail = m.prev;
    m.prev = undefined;
    m.next = undefined;
    this.size--;
  }
}
