/**
 * The logical Sender: one link name and address that outlives any number of physical
 * connections. Every send() goes through the connection's ReplayJournal (bounded buffer,
 * per-delivery state) and resolves with the broker's outcome; after a failover the journal's
 * queued and in-doubt entries are written again, in order, with the same bytes (same message-id).
 */
import { EventEmitter } from 'eventemitter3';
import type { AmqpErrorBody } from '../codec/contract.js';
import { encodeMessage, type Message, type MessageBody } from '../codec/message.js';
import type { MessageId } from '../codec/message-id.js';
import { ArgumentTypeError, ClientError, SendError } from '../errors.js';
import { ensureMessageId, type JournalEntry } from '../failover/index.js';
import type { EngineEvent, OutgoingDelivery, SenderLink } from '../protocol/index.js';
import { DEDUP_CAPABILITY } from '../wire-extensions.js';
import type { Sender as PublicSender } from './api.js';
import type { Connection } from './connection.js';
import { Deadline } from './deadline.js';
import { type SendTraceContext, sendChannel } from './diagnostics.js';
import { assertEncodable } from './encodable.js';
import { type ClientLink, isPermanentDetach, linkError, Waiters } from './link-base.js';
import { sendErrorFrom } from './outcome.js';
import type { PhysicalConnection } from './transport.js';
import type { CallOptions, LinkEvents, SenderOptions, SendOptions, SendResult } from './types.js';

/** One send() in flight: the journal entry's context. */
export interface PendingSend {
  readonly sender: Sender;
  readonly messageId: MessageId;
  seq: number;
  /** The delivery on the current link, if it was handed to the engine. */
  delivery: OutgoingDelivery | undefined;
  /** The delivery already counted by journal.markSent (so it is counted once). */
  counted: OutgoingDelivery | undefined;
  done: boolean;
  deadline: Deadline | undefined;
  resolve(result: SendResult): void;
  reject(error: Error): void;
}

/** A send waiting for room in the journal (onFull: 'wait'). */
export interface SendWaiter {
  readonly sender: Sender;
  readonly messageId: MessageId;
  readonly bytes: Uint8Array;
  readonly ctx: PendingSend;
}

type SenderState = 'attaching' | 'attached' | 'detached' | 'closing' | 'closed';

/**
 * A sending link, from {@link Connection.openSender}. Every {@link Sender.send} gets a stable
 * message-id and is re-sent after failover until the broker settles it
 * (docs/delivery-contract.md#in-doubt-resend).
 */
export class Sender extends EventEmitter<LinkEvents> implements ClientLink, PublicSender {
  /** The link name, kept across re-attach. */
  readonly name: string;
  /** True if sends are pre-settled (at-most-once, no outcome awaited). */
  readonly presettled: boolean;
  /** Where the link is in its life. */
  state: SenderState = 'detached';
  private link: SenderLink | undefined;
  private tagCounter = 0;
  private readonly presettledInFlight = new Set<PendingSend>();
  private readonly attachWaiters = new Waiters();
  private closeWaiter: (() => void) | undefined;
  /** Set when the link failed for good. */
  private failure: Error | undefined;

  /** @internal use Connection.openSender(). */
  constructor(
    private readonly conn: Connection,
    /** The address (queue name) the link sends to. */
    readonly address: string,
    options: SenderOptions,
    name: string,
  ) {
    super();
    this.name = options.name ?? name;
    this.presettled = options.presettled === true;
  }

  /** True while the link is attached on a live connection. */
  get isAttached(): boolean {
    return this.state === 'attached';
  }

  // ------------------------------------------------------------------ public API

  /**
   * Send a message; resolves with the broker's outcome (and the message-id it went with).
   * A message without `messageId` gets one on the library's own copy (the caller's object is
   * never modified). Rejects with SendError (`messageId`, `inDoubt`) at the deadline/abort, when
   * the sender or connection closes, or when failover gives up.
   */
  send<T = MessageBody>(message: Message<T>, options?: SendOptions): Promise<SendResult> {
    const { message: copy, messageId } = ensureMessageId(message as Message);
    if (!sendChannel.hasSubscribers) return this.sendCopy(copy, messageId, options);
    // subscribers may add application properties (trace context): give them a fresh object
    copy.applicationProperties = { ...copy.applicationProperties };
    const context: SendTraceContext = {
      message: copy,
      address: this.address,
      messageId,
      containerId: this.conn.containerId,
    };
    return sendChannel.tracePromise(async () => {
      try {
        const result = await this.sendCopy(context.message as Message, messageId, options);
        context.outcome = { state: 'accepted' };
        return result;
      } catch (e) {
        if (e instanceof SendError && e.outcome) context.outcome = e.outcome;
        throw e;
      }
    }, context);
  }

  /**
   * Send several messages in one socket write (the transport writes everything produced in one
   * microtask batch at once); one promise per message, each ending as its send() would.
   */
  sendBatch<T = MessageBody>(messages: Message<T>[], options?: SendOptions): Promise<SendResult>[] {
    if (!Array.isArray(messages))
      throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'sendBatch() needs an array of messages');
    const results = messages.map((m) => this.send(m, options));
    // a caller that awaits only some of them must not crash the process on the others
    for (const r of results) r.catch(() => undefined);
    return results;
  }

  /** send() on the library's own copy (messageId set). */
  private sendCopy(
    copy: Message,
    messageId: MessageId,
    options: SendOptions | undefined,
  ): Promise<SendResult> {
    if (this.failure || this.state === 'closing' || this.state === 'closed') {
      const why = this.failure ?? new ClientError('quorate:closed', `sender '${this.name}' is closed`);
      return Promise.reject(sendErrorFrom(why, messageId, false));
    }
    let bytes: Uint8Array;
    try {
      checkSections(copy);
      bytes = encodeMessage(copy);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<SendResult>((resolve, reject) => {
      const ctx: PendingSend = {
        sender: this,
        messageId,
        seq: 0,
        delivery: undefined,
        counted: undefined,
        done: false,
        deadline: undefined,
        resolve,
        reject,
      };
      const waiter: SendWaiter = { sender: this, messageId, bytes, ctx };
      ctx.deadline = new Deadline(
        options,
        (_reason, error) => this.conn.sends.expire(ctx, waiter, error),
        'send',
      );
      if (ctx.done) return; // already-aborted signal: expired at once
      this.conn.sends.admit(waiter);
    });
  }

  /** `await using link = await conn.open...()`: closes the link. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Detach the link for good. Sends still pending reject with 'quorate:closed'. */
  close(options?: CallOptions): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    const link = this.link;
    const wasAttached = this.state === 'attached' && link !== undefined;
    this.state = 'closing';
    this.conn.unregister(this);
    this.rejectAll(new ClientError('quorate:closed', `sender '${this.name}' closed`));
    if (!wasAttached) {
      this.finishClose();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const deadline = new Deadline(options, () => {
        this.finishClose();
        resolve();
      });
      this.closeWaiter = () => {
        deadline.clear();
        resolve();
      };
      link.detach(undefined, true);
      this.conn.kick();
    });
  }

  // ------------------------------------------------------------------ connection-facing

  /** @internal a promise for openSender(): resolved once attached. */
  whenAttached(options?: CallOptions): Promise<void> {
    if (this.state === 'attached') return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return this.attachWaiters.wait(options, 'openSender');
  }

  /** @internal */
  shouldAttach(): boolean {
    return this.state !== 'closing' && this.state !== 'closed' && !this.failure;
  }

  /** @internal */
  attachTo(phys: PhysicalConnection): void {
    const session = phys.engine.begin();
    const link = session.attachSender({
      name: this.name,
      source: { address: this.name },
      target: { address: this.address },
      sndSettleMode: this.presettled ? 2 : 0,
      // failover re-sends in-doubt messages with the same message-id: a broker offering this drops the copy
      desiredCapabilities: [DEDUP_CAPABILITY],
    });
    link.context = this;
    session.context = this;
    this.link = link;
    this.state = 'attaching';
    // replay first: queued and in-doubt entries of this sender, original order, before newer sends
    for (const entry of this.conn.journal.replayOrder()) {
      if (entry.context.sender === this) this.write(entry);
    }
  }

  /** @internal hand a journal entry to the current link (if there is one). */
  write(entry: JournalEntry<PendingSend>): void {
    const link = this.link;
    const ctx = entry.context;
    if (!link || (this.state !== 'attaching' && this.state !== 'attached')) return;
    let d: OutgoingDelivery;
    try {
      d = link.send(this.nextTag(), entry.bytes, { settled: this.presettled });
    } catch (e) {
      // e.g. larger than the peer's max-message-size: never written
      this.conn.sends.finish(
        ctx,
        undefined,
        new ClientError('quorate:message-too-large', String(e), { cause: e }),
      );
      return;
    }
    d.context = ctx;
    ctx.delivery = d;
    if (this.presettled) {
      this.presettledInFlight.add(ctx);
      this.sweepPresettled();
    }
    this.conn.kick();
  }

  /** @internal journal.markSent once per written delivery (written = may have arrived). */
  syncWritten(ctx: PendingSend): void {
    const d = ctx.delivery;
    if (d?.written && ctx.counted !== d) {
      ctx.counted = d;
      this.conn.sends.markWritten(ctx.seq);
    }
  }

  /** @internal */
  onEngineEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'link-attached': {
        if (ev.link !== this.link) return;
        if (!ev.attach.target) return; // refused: the detach with the error follows
        this.state = 'attached';
        this.attachWaiters.resolveAll();
        this.emit('attached');
        return;
      }
      case 'link-credit':
        if (ev.link === this.link) this.sweepPresettled();
        return;
      case 'delivery-update': {
        const d = ev.delivery as OutgoingDelivery;
        const ctx = d.context as PendingSend | undefined;
        if (!ctx || ctx.done || ctx.delivery !== d) return;
        if (d.remoteState || d.remoteSettled) {
          this.syncWritten(ctx);
          this.conn.sends.finish(ctx, d.remoteState ?? { type: 'accepted' });
        }
        return;
      }
      case 'link-detached':
        if (ev.link === this.link) this.onDetached(ev.error, ev.closed);
        return;
      default:
        return;
    }
  }

  /** @internal */
  onConnectionLost(error: Error): void {
    this.link = undefined;
    this.presettledInFlight.clear();
    if (this.state === 'closing') {
      this.finishClose();
      return;
    }
    if (this.state === 'closed') return;
    this.state = 'detached';
    this.emit('detached', { error, closed: false });
  }

  /** @internal */
  fail(error: Error): void {
    if (this.state === 'closed') return;
    this.failure = error;
    this.link = undefined;
    this.state = 'closed';
    this.conn.unregister(this);
    this.rejectAll(error);
    this.attachWaiters.rejectAll(error);
    this.emit('detached', { error, closed: true });
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  // ------------------------------------------------------------------ internals

  private onDetached(error: AmqpErrorBody | undefined, closed: boolean): void {
    const link = this.link;
    this.link = undefined;
    link?.session.end();
    this.conn.kick();
    if (this.state === 'closing') {
      this.finishClose();
      return;
    }
    // by the peer, or by our engine because the broker broke a link rule: handled the same
    const wasAttached = this.state === 'attached';
    if (!wasAttached || isPermanentDetach(error, closed)) {
      // refused, or closed on purpose by the broker: this link cannot exist there
      this.fail(linkError(error, `attach of sender '${this.name}' to '${this.address}' refused`));
      return;
    }
    // lost under a live connection (session crash, forced detach): fail over the connection so
    // every written delivery is in doubt and replayed in order on a fresh session
    this.state = 'detached';
    this.conn.linkLost(this, linkError(error, `sender '${this.name}' detached by the broker`));
  }

  private finishClose(): void {
    this.state = 'closed';
    this.link = undefined;
    const w = this.closeWaiter;
    this.closeWaiter = undefined;
    this.emit('detached', { closed: true });
    w?.();
  }

  private rejectAll(error: Error): void {
    for (const entry of this.conn.journal.entries()) {
      if (entry.context.sender === this) this.conn.sends.finish(entry.context, undefined, error);
    }
    this.conn.sends.rejectWaiters(this, error);
  }

  private sweepPresettled(): void {
    for (const ctx of this.presettledInFlight) {
      const d = ctx.delivery;
      if (!d || ctx.done) {
        this.presettledInFlight.delete(ctx);
        continue;
      }
      if (d.status === 'settled') {
        this.presettledInFlight.delete(ctx);
        this.syncWritten(ctx);
        this.conn.sends.finish(ctx, { type: 'accepted' });
      }
    }
  }

  private nextTag(): Uint8Array {
    const n = this.tagCounter++;
    const tag = new Uint8Array(4);
    new DataView(tag.buffer).setUint32(0, n >>> 0);
    return tag;
  }
}

/** Values the codec would change or drop are an encode error naming their path (encodable.ts). */
function checkSections(m: Message): void {
  if (m.body !== undefined && !(m.body instanceof Uint8Array)) assertEncodable(m.body, 'body');
  if (m.applicationProperties) assertEncodable(m.applicationProperties, 'applicationProperties');
  if (m.messageAnnotations) assertEncodable(m.messageAnnotations, 'messageAnnotations');
  if (m.deliveryAnnotations) assertEncodable(m.deliveryAnnotations, 'deliveryAnnotations');
  if (m.footer) assertEncodable(m.footer, 'footer');
}
