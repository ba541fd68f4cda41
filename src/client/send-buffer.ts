/**
 * Every send() of a connection, from admission to outcome: the bounded ReplayJournal (messages
 * and bytes, counted until settlement), the sends waiting for room (onFull 'wait'), and how a
 * send ends: with the broker's outcome, or rejected with a SendError that carries its messageId
 * and whether it may have arrived (inDoubt = it was ever written).
 */
import type { DeliveryState } from '../codec/contract.js';
import type { MessageId } from '../codec/message-id.js';
import { ClientError } from '../errors.js';
import { type Grant, type JournalEntry, ReplayJournal } from '../failover/index.js';
import type { OutgoingDelivery } from '../protocol/index.js';
import type { LinkState } from './api.js';
import type { Deadline } from './deadline.js';
import { refusedSendError, sendErrorFrom, toOutcome } from './outcome.js';
import type { Transaction as LocalTransaction } from './transaction.js';
import type { ConnectOptions, SendResult } from './types.js';

/** What the buffer needs from the Sender a send belongs to. */
export interface SendOwner {
  readonly address: string;
  readonly state: LinkState;
  /** Hand a journal entry to the current link (if there is one). */
  write(entry: JournalEntry<PendingSend>): void;
  /** journal.markSent once per written delivery. */
  syncWritten(ctx: PendingSend): void;
}

/** One send() in flight: the journal entry's context. */
export interface PendingSend {
  readonly sender: SendOwner;
  readonly messageId: MessageId;
  seq: number;
  /** The delivery on the current link, if it was handed to the engine. */
  delivery: OutgoingDelivery | undefined;
  /** The delivery already counted by journal.markSent (so it is counted once). */
  counted: OutgoingDelivery | undefined;
  done: boolean;
  deadline: Deadline | undefined;
  /** The transaction it was sent in: never replayed, ended with it. */
  readonly transaction: LocalTransaction | undefined;
  resolve(result: SendResult): void;
  reject(error: Error): void;
}

/** A send waiting for room in the journal (onFull: 'wait'). */
export interface SendWaiter {
  readonly sender: SendOwner;
  readonly messageId: MessageId;
  readonly bytes: Uint8Array;
  readonly ctx: PendingSend;
}

/** Counters of one connection's sends since connect(), for conn.stats(). */
export interface SendCounters {
  /** Deliveries written for the first time. */
  sent: number;
  /** Deliveries written again after a failover (same message-id and bytes). */
  resent: number;
  accepted: number;
  /** Settled by the broker with rejected, released or modified. */
  notAccepted: number;
}

/**
 * Whether the connection refuses new sends. The connection itself, so admit() calls a method every
 * connection shares: optimized code that calls a closure made per connection holds it (and the
 * connection with it) as a constant, and is thrown away (V8's "weak objects" deopt) and compiled
 * again after each connection is collected.
 */
export interface SendGate {
  /** Why new sends are refused (the connection closed or gave up), if they are. */
  sendRefusal(): Error | undefined;
}

export class SendBuffer {
  readonly journal: ReplayJournal<PendingSend, SendWaiter>;
  readonly counters: SendCounters = { sent: 0, resent: 0, accepted: 0, notAccepted: 0 };
  private readonly waiters = new Set<SendWaiter>();

  constructor(
    options: Pick<ConnectOptions, 'bufferLimit' | 'onFull'>,
    private readonly gate: SendGate,
  ) {
    this.journal = new ReplayJournal<PendingSend, SendWaiter>({
      maxMessages: options.bufferLimit?.messages ?? 10_000,
      maxBytes: options.bufferLimit?.bytes ?? 64 * 1024 * 1024,
      onFull: options.onFull ?? 'wait',
    });
  }

  /** A send asks for room: journaled and written now, parked, or rejected (bound, closed). */
  admit(waiter: SendWaiter): void {
    const refused = this.gate.sendRefusal();
    if (refused) {
      this.rejectUnjournaled(waiter.ctx, refused);
      return;
    }
    const a = this.journal.admit(waiter.bytes.length, waiter);
    if (a.kind === 'reserved') {
      this.appendAndWrite(waiter, a.reservation);
    } else if (a.kind === 'waiting') {
      this.waiters.add(waiter);
    } else {
      const limits = this.journal.limits;
      const description =
        a.reason === 'too-large'
          ? `message of ${waiter.bytes.length} bytes exceeds the send buffer (${limits.maxBytes} bytes)`
          : `send buffer full (${this.journal.size} messages, ${this.journal.bytes} bytes; limits ${limits.maxMessages} / ${limits.maxBytes})`;
      this.rejectUnjournaled(waiter.ctx, new ClientError('quorate:buffer-full', description));
    }
  }

  /** The send's deadline or AbortSignal fired. */
  expire(ctx: PendingSend, waiter: SendWaiter, error: Error): void {
    if (ctx.done) return;
    if (ctx.seq === 0) {
      if (this.waiters.delete(waiter)) this.grant(this.journal.cancelWait(waiter));
      this.rejectUnjournaled(ctx, error);
      return;
    }
    this.finish(ctx, undefined, error);
  }

  /**
   * End a journaled send: with the broker's outcome, or (no state) with `error`, leaving the
   * journal with inDoubt = whether it was ever written.
   */
  finish(ctx: PendingSend, state: DeliveryState | undefined, error?: Error): void {
    if (ctx.done) return;
    ctx.done = true;
    ctx.deadline?.clear();
    if (state) {
      const r = this.journal.settle(ctx.seq, state);
      const resent = (r?.entry.writes ?? 1) > 1;
      const outcome = toOutcome(state);
      if (outcome.state === 'accepted') {
        ctx.transaction?.sendEnded(ctx, { accepted: true, unanswered: false });
        this.counters.accepted++;
        ctx.resolve({ state: 'accepted', messageId: ctx.messageId, resent });
      } else {
        // a refusal never looks like success to code that only awaits send()
        const refused = refusedSendError(outcome, ctx.messageId);
        ctx.transaction?.sendEnded(ctx, { accepted: false, unanswered: false, error: refused });
        this.counters.notAccepted++;
        ctx.reject(refused);
      }
      if (r) this.grant(r.granted);
      return;
    }
    ctx.sender.syncWritten(ctx);
    const r = this.journal.abandon(ctx.seq);
    const d = ctx.delivery;
    if (d && !d.written) d.abort(); // never on the wire: drop it from the engine's queue
    const written = r?.inDoubt ?? false;
    const cause = error ?? new ClientError('quorate:closed', 'send abandoned');
    // in a transaction a send without an outcome is never committed: its transaction ends
    // rolled back (lost with the connection, or forced to roll back by this very call)
    ctx.transaction?.sendEnded(ctx, { accepted: false, unanswered: written, error: cause });
    const rolledBack = ctx.transaction !== undefined && written;
    ctx.reject(sendErrorFrom(cause, ctx.messageId, written && !rolledBack, rolledBack));
    if (r) this.grant(r.granted);
  }

  /** The journal entry `seq` was written once more (it may have reached the broker). */
  markWritten(seq: number): void {
    const e = this.journal.markSent(seq);
    if (!e) return;
    if (e.writes === 1) this.counters.sent++;
    else this.counters.resent++;
  }

  /** Sends waiting for room in the buffer (onFull 'wait'). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Reject the sends of `sender` still waiting for room (`undefined`: every sender's). */
  rejectWaiters(sender: PendingSend['sender'] | undefined, error: Error): void {
    for (const w of [...this.waiters]) {
      if (sender !== undefined && w.sender !== sender) continue;
      this.waiters.delete(w);
      this.grant(this.journal.cancelWait(w));
      this.rejectUnjournaled(w.ctx, error);
    }
  }

  /** Every send, waiting or journaled, rejects with `error`. */
  failAll(error: Error): void {
    this.rejectWaiters(undefined, error);
    for (const e of this.journal.entries()) this.finish(e.context, undefined, error);
  }

  /** The connection died: every written, unsettled delivery is now in doubt (send order). */
  connectionLost(): JournalEntry<PendingSend>[] {
    this.syncWritten();
    return this.journal.connectionLost().entries;
  }

  /**
   * Count every delivery the engine has written since the last look (writes are noticed lazily,
   * at settlement or loss, to keep the send path free of bookkeeping; stats() asks for it now).
   */
  syncWritten(): void {
    for (const e of this.journal.entries()) e.context.sender.syncWritten(e.context);
  }

  private rejectUnjournaled(ctx: PendingSend, cause: Error): void {
    if (ctx.done) return;
    ctx.done = true;
    ctx.deadline?.clear();
    ctx.transaction?.sendEnded(ctx, { accepted: false, unanswered: false, error: cause });
    ctx.reject(sendErrorFrom(cause, ctx.messageId, false));
  }

  private appendAndWrite(waiter: SendWaiter, reservation: Grant<SendWaiter>['reservation']): void {
    const entry = this.journal.append(reservation, waiter.messageId, waiter.bytes, waiter.ctx);
    waiter.ctx.seq = entry.seq;
    const s = waiter.sender;
    if (s.state === 'attached' || s.state === 'attaching') s.write(entry);
  }

  private grant(granted: Grant<SendWaiter>[]): void {
    for (const g of granted) {
      this.waiters.delete(g.waiter);
      if (g.waiter.ctx.done) {
        this.grant(this.journal.release(g.reservation));
        continue;
      }
      this.appendAndWrite(g.waiter, g.reservation);
    }
  }
}
