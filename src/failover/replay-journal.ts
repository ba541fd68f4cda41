/**
 * The sender-side replay journal: every message from send() until the broker settles it.
 *
 * Per-delivery state: `queued` (not yet written) -> `sent` (written, unsettled) -> settled
 * (leaves the journal), or `in-doubt` when the connection dies while `sent`. After failover the
 * client re-sends `replayOrder()` (queued and in-doubt, in original send order) with the same
 * message-id and bytes. The journal is bounded (messages and bytes, counted from send() to
 * settlement); at the bound the client waits (`onFull: 'wait'`, FIFO) or rejects (`'reject'`).
 *
 * `C` is the client's per-send context (link, resolvers...); `W` its waiter type.
 */
import type { DeliveryState } from '../codec/contract.js';
import type { MessageId } from '../codec/message-id.js';
import { AmqpError } from '../errors.js';
import { AdmissionGate, type AdmissionLimits, type Grant, type Reservation } from './admission.js';

export type DeliveryPhase = 'queued' | 'sent' | 'in-doubt' | 'settled';

export interface JournalEntry<C = unknown> {
  /** journal sequence number: original send order */
  readonly seq: number;
  readonly messageId: MessageId;
  /** the encoded message, written as is on every (re)send */
  readonly bytes: Uint8Array;
  /** bytes accounted against the bound */
  readonly size: number;
  readonly context: C;
  readonly state: DeliveryPhase;
  /** how many times it was written (> 1 means re-sent) */
  readonly writes: number;
  /** set once settled */
  readonly outcome?: DeliveryState;
}

export type OnFull = 'wait' | 'reject';

export interface ReplayJournalOptions extends AdmissionLimits {
  /** at the bound: park the send (default) or reject it at once */
  onFull?: OnFull;
}

export type AdmitResult =
  | { kind: 'reserved'; reservation: Reservation }
  | { kind: 'waiting' }
  | { kind: 'rejected'; reason: 'full' | 'too-large' };

export interface ReplayPlan<C> {
  /** queued and in-doubt entries, original order: write them all before anything newer */
  entries: JournalEntry<C>[];
  /** how many of them were written before (in doubt): the `failover` event's resent count */
  resent: number;
}

type MutableEntry<C> = { -readonly [K in keyof JournalEntry<C>]: JournalEntry<C>[K] } & {
  reservation: Reservation;
};

export class ReplayJournal<C = unknown, W = unknown> {
  readonly onFull: OnFull;
  private readonly gate: AdmissionGate<W>;
  private readonly bySeq = new Map<number, MutableEntry<C>>();
  private nextSeq = 1;
  /** reservation ids already backing an entry (their room is returned by settle/abandon) */
  private readonly appended = new Set<number>();

  constructor(options: ReplayJournalOptions = {}) {
    this.onFull = options.onFull ?? 'wait';
    this.gate = new AdmissionGate<W>(options);
  }

  /** Entries held (not yet settled or abandoned). */
  get size(): number {
    return this.bySeq.size;
  }
  get bytes(): number {
    return this.gate.usedBytes;
  }
  get waiting(): number {
    return this.gate.waiting;
  }
  get limits(): { maxMessages: number; maxBytes: number } {
    return { maxMessages: this.gate.maxMessages, maxBytes: this.gate.maxBytes };
  }

  canAccept(size: number): boolean {
    return this.gate.canAccept(size);
  }

  /** Reserve room for a message of `size` bytes, or fail with 'full' / 'too-large'. */
  tryReserve(size: number): ReturnType<AdmissionGate<W>['tryReserve']> {
    return this.gate.tryReserve(size);
  }

  /**
   * One call for send(): reserve now; else, by `onFull`, park `waiter` (FIFO) or reject.
   * A parked waiter comes back as a Grant from settle/abandon/release/cancelWait.
   */
  admit(size: number, waiter: W): AdmitResult {
    const r = this.gate.tryReserve(size);
    if (r.ok) return { kind: 'reserved', reservation: r.reservation };
    if (r.reason === 'too-large' || this.onFull === 'reject') return { kind: 'rejected', reason: r.reason };
    this.gate.enqueue(size, waiter);
    return { kind: 'waiting' };
  }

  /** Park a waiter explicitly (FIFO). */
  wait(size: number, waiter: W): void {
    this.gate.enqueue(size, waiter);
  }

  /** The waiter's send was aborted: forget it. Returns waiters this lets through. */
  cancelWait(waiter: W): Grant<W>[] {
    return this.gate.cancel(waiter).granted;
  }

  /** Give back a reservation that was never appended (send aborted before it was journaled). */
  release(reservation: Reservation): Grant<W>[] {
    if (this.appended.has(reservation.id)) return [];
    return this.gate.release(reservation);
  }

  /** Journal a message under a live reservation; it starts `queued`. */
  append(reservation: Reservation, messageId: MessageId, bytes: Uint8Array, context: C): JournalEntry<C> {
    if (!this.gate.isLive(reservation) || this.appended.has(reservation.id)) {
      throw new AmqpError('amqp:illegal-state', 'journal append needs a live, unused reservation');
    }
    this.appended.add(reservation.id);
    const entry: MutableEntry<C> = {
      seq: this.nextSeq++,
      messageId,
      bytes,
      size: reservation.size,
      context,
      state: 'queued',
      writes: 0,
      reservation,
    };
    this.bySeq.set(entry.seq, entry);
    return entry;
  }

  private free(e: MutableEntry<C>): Grant<W>[] {
    this.appended.delete(e.reservation.id);
    return this.gate.release(e.reservation);
  }

  get(seq: number): JournalEntry<C> | undefined {
    return this.bySeq.get(seq);
  }

  /** The entry was written to the current connection. */
  markSent(seq: number): JournalEntry<C> | undefined {
    const e = this.bySeq.get(seq);
    if (e === undefined) return undefined;
    e.state = 'sent';
    e.writes++;
    return e;
  }

  /** The broker settled it: it leaves the journal. Undefined if unknown (late or abandoned). */
  settle(seq: number, outcome: DeliveryState): { entry: JournalEntry<C>; granted: Grant<W>[] } | undefined {
    const e = this.bySeq.get(seq);
    if (e === undefined) return undefined;
    this.bySeq.delete(seq);
    e.state = 'settled';
    e.outcome = outcome;
    return { entry: e, granted: this.free(e) };
  }

  /**
   * Deadline or abort: the entry leaves the journal (it will not be re-sent). `inDoubt` tells
   * whether it was ever written, i.e. whether the broker may have it.
   */
  abandon(seq: number): { entry: JournalEntry<C>; inDoubt: boolean; granted: Grant<W>[] } | undefined {
    const e = this.bySeq.get(seq);
    if (e === undefined) return undefined;
    this.bySeq.delete(seq);
    return { entry: e, inDoubt: e.writes > 0, granted: this.free(e) };
  }

  /**
   * The connection died: every `sent` entry becomes `in-doubt`. Returns how many and which (for
   * the client's `inDoubt` event), in send order.
   */
  connectionLost(): { inDoubt: number; entries: JournalEntry<C>[] } {
    const entries: JournalEntry<C>[] = [];
    for (const e of this.bySeq.values()) {
      if (e.state === 'sent') {
        e.state = 'in-doubt';
        entries.push(e);
      }
    }
    return { inDoubt: entries.length, entries };
  }

  /** Queued and in-doubt entries in original send order (what a new connection must write first). */
  replayOrder(): JournalEntry<C>[] {
    const out: JournalEntry<C>[] = [];
    // Map iteration is insertion order == seq order
    for (const e of this.bySeq.values()) if (e.state === 'queued' || e.state === 'in-doubt') out.push(e);
    return out;
  }

  /** replayOrder() plus the count of re-sends, for the client's `failover` event. */
  replayPlan(): ReplayPlan<C> {
    const entries = this.replayOrder();
    return { entries, resent: entries.filter((e) => e.state === 'in-doubt').length };
  }

  /** All held entries, original order. */
  entries(): JournalEntry<C>[] {
    return [...this.bySeq.values()];
  }

  counts(): Record<Exclude<DeliveryPhase, 'settled'>, number> {
    const c = { queued: 0, sent: 0, 'in-doubt': 0 };
    for (const e of this.bySeq.values()) c[e.state as keyof typeof c]++;
    return c;
  }
}
