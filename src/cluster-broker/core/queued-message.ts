/**
 * One message held by a queue, and the seq-ordered list of available messages.
 *
 * Memory matters (target <= 1.5 KiB per queued 1 KiB message): one small object per message with
 * a fixed shape, the message bytes in a Uint8Array the queue owns, list links inside the object
 * (no per-message Map or array), optional fields left undefined in the common case.
 */
import type { Queue } from './queue.js';
import type { DeadLetterInfo } from './results.js';

const EMPTY = new Uint8Array(0);

export class QueuedMessage {
  /** Broker-wide sequence number, assigned at enqueue in log order. */
  readonly seq: number;
  /** The queue holding it (a pointer, so expiry and settle find it in O(1)). */
  readonly queue: Queue;
  bytes: Uint8Array;
  /** Expiry deadline in leader time, or -1 for none. */
  expiresAt: number;
  deliveryCount: number;
  /** Some link acquired this message before (so first-acquirer is false from now on). */
  acquiredBefore = false;
  /** False once accepted, dropped, dead-lettered, expired or its queue deleted. */
  live = true;
  /** Consumer key holding it, or undefined while available. */
  owner: string | undefined = undefined;
  /** Consumer keys it must never be offered to again (modified{undeliverableHere}). */
  undeliverable: string[] | undefined = undefined;
  deadLetter: DeadLetterInfo | undefined = undefined;
  prev: QueuedMessage | undefined = undefined;
  next: QueuedMessage | undefined = undefined;

  constructor(queue: Queue, seq: number, bytes: Uint8Array, expiresAt: number, deliveryCount: number) {
    this.queue = queue;
    this.seq = seq;
    this.bytes = bytes;
    this.expiresAt = expiresAt;
    this.deliveryCount = deliveryCount;
  }

  isExpired(now: number): boolean {
    return this.expiresAt >= 0 && this.expiresAt <= now;
  }

  /** Marks it gone and lets its bytes be collected even if an expiry-heap entry still points here. */
  kill(): void {
    this.live = false;
    this.bytes = EMPTY;
    this.owner = undefined;
  }
}

/** Available messages in ascending seq order; O(1) at both ends and for unlinking. */
export class AvailableList {
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
