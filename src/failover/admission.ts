/**
 * Admission to a bounded buffer (messages and bytes), with a FIFO of waiters.
 *
 * Pure bookkeeping: the client reserves room before it journals a send; when there is none it
 * either rejects at once or parks a waiter (typically a Promise resolver) here. Whenever room
 * comes back (`release`, `cancel`), the waiters that now fit are granted in FIFO order, with
 * their room already reserved, and returned for the client to resolve. Waiters never overtake
 * each other: a big message at the head holds back smaller ones behind it.
 */
import { AmqpError, ArgumentRangeError } from '../errors.js';

export interface Reservation {
  readonly id: number;
  readonly size: number;
}

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; reason: 'full' | 'too-large' };

export interface Grant<W> {
  waiter: W;
  reservation: Reservation;
}

export interface AdmissionLimits {
  /** default 10,000 */
  maxMessages?: number;
  /** default 64 MiB */
  maxBytes?: number;
}

export class AdmissionGate<W = unknown> {
  readonly maxMessages: number;
  readonly maxBytes: number;
  private usedMessagesCount = 0;
  private usedBytesCount = 0;
  private nextId = 1;
  private readonly live = new Set<number>();
  private readonly waiters: { size: number; waiter: W }[] = [];

  constructor(limits: AdmissionLimits = {}) {
    this.maxMessages = limits.maxMessages ?? 10_000;
    this.maxBytes = limits.maxBytes ?? 64 * 1024 * 1024;
    if (!(this.maxMessages >= 1) || !(this.maxBytes >= 1)) {
      throw new ArgumentRangeError('buffer limits must be at least 1 message and 1 byte');
    }
  }

  get usedMessages(): number {
    return this.usedMessagesCount;
  }
  get usedBytes(): number {
    return this.usedBytesCount;
  }
  get waiting(): number {
    return this.waiters.length;
  }

  /** Could a message of this size ever be admitted? */
  fits(size: number): boolean {
    return size <= this.maxBytes;
  }

  /** Is there room for `size` bytes right now, with nobody queued ahead? */
  canAccept(size: number): boolean {
    return this.waiters.length === 0 && this.hasRoom(size);
  }

  tryReserve(size: number): ReserveResult {
    if (!this.fits(size)) return { ok: false, reason: 'too-large' };
    if (!this.canAccept(size)) return { ok: false, reason: 'full' };
    return { ok: true, reservation: this.reserve(size) };
  }

  /** Park a waiter for `size` bytes (FIFO). It is granted by a later release()/cancel(). */
  enqueue(size: number, waiter: W): void {
    if (!this.fits(size)) {
      throw new AmqpError(
        'amqp:resource-limit-exceeded',
        `message of ${size} bytes exceeds the buffer (${this.maxBytes})`,
      );
    }
    this.waiters.push({ size, waiter });
  }

  /** Remove a parked waiter (deadline, abort). Returns the waiters this lets through. */
  cancel(waiter: W): { removed: boolean; granted: Grant<W>[] } {
    const i = this.waiters.findIndex((w) => w.waiter === waiter);
    if (i < 0) return { removed: false, granted: [] };
    this.waiters.splice(i, 1);
    return { removed: true, granted: this.grant() };
  }

  /** Give a reservation's room back. Returns the waiters this lets through (room reserved). */
  release(reservation: Reservation): Grant<W>[] {
    if (!this.live.delete(reservation.id)) return [];
    this.usedMessagesCount--;
    this.usedBytesCount -= reservation.size;
    return this.grant();
  }

  isLive(reservation: Reservation): boolean {
    return this.live.has(reservation.id);
  }

  private hasRoom(size: number): boolean {
    return this.usedMessagesCount + 1 <= this.maxMessages && this.usedBytesCount + size <= this.maxBytes;
  }

  private reserve(size: number): Reservation {
    const reservation = { id: this.nextId++, size };
    this.live.add(reservation.id);
    this.usedMessagesCount++;
    this.usedBytesCount += size;
    return reservation;
  }

  private grant(): Grant<W>[] {
    const granted: Grant<W>[] = [];
    while (this.waiters.length > 0 && this.hasRoom(this.waiters[0]!.size)) {
      const w = this.waiters.shift()!;
      granted.push({ waiter: w.waiter, reservation: this.reserve(w.size) });
    }
    return granted;
  }
}
