/**
 * The logical Sender: one link name and address that outlives any number of physical
 * connections. Every send() goes through the connection's ReplayJournal (bounded buffer,
 * per-delivery state) and resolves with the broker's outcome; after a failover the journal's
 * queued and in-doubt entries are written again, in order, with the same bytes (same message-id).
 */
import type { Fields } from '../codec/contract.js';
import { encodeMessage, type Message, type MessageBody } from '../codec/message.js';
import type { MessageId } from '../codec/message-id.js';
import { ArgumentTypeError, ClientError } from '../errors.js';
import { ensureMessageId, type JournalEntry } from '../failover/index.js';
import type { EngineEvent, OutgoingDelivery, SenderLink } from '../protocol/index.js';
import { DEDUP_CAPABILITY, TOPIC_CAPABILITY } from '../wire-extensions.js';
import type { Sender as PublicSender } from './api.js';
import { Deadline } from './deadline.js';
import { type SendTraceContext, sendChannel } from './diagnostics.js';
import { assertEncodable } from './encodable.js';
import { type LinkHost, LogicalLink } from './link-base.js';
import { sendErrorFrom } from './outcome.js';
import type { PhysicalConnection } from './physical.js';
import type { PendingSend, SendBuffer, SendOwner, SendWaiter } from './send-buffer.js';
import { SendError } from './send-error.js';
import { keepSendShapesOf } from './send-shapes.js';
import { checkTransaction, type Transaction } from './transaction.js';
import type { SenderOptions, SendOptions, SendResult } from './types.js';

/** A Sender holding nothing, for send-shapes.ts: its fields are its constructor's alone. */
const senderTwin = (nothing: object): object => new Sender(nothing as SenderHost, '', {}, '');

/** What a Sender needs from its connection: the link host plus the connection's send buffer. */
export interface SenderHost extends LinkHost {
  readonly sends: SendBuffer;
}

/**
 * A sending link, from {@link Connection.openSender}. Every {@link Sender.send} gets a stable
 * message-id and is re-sent after failover until the broker settles it
 * (docs/delivery-contract.md#in-doubt-resend).
 */
export class Sender extends LogicalLink<SenderLink> implements SendOwner, PublicSender {
  /** True if sends are pre-settled (at-most-once, no outcome awaited). */
  readonly presettled: boolean;
  /** Publishes to a topic (docs/topics.md). */
  readonly topic: boolean;
  private readonly sends: SendBuffer;
  private tagCounter = 0;
  private readonly presettledInFlight = new Set<PendingSend>();
  /** Whether this sender's first send left its twins (send-shapes.ts). */
  private shapesKept = false;

  /** @internal link properties of the attach (the management pair's `paired`). */
  attachProperties: Fields | undefined;

  /** @internal use Connection.openSender(). */
  constructor(
    host: SenderHost,
    /** The address (queue name) the link sends to. */
    readonly address: string,
    options: SenderOptions,
    name: string,
  ) {
    super(host, 'sender', options.name ?? name);
    this.sends = host.sends;
    this.presettled = options.presettled === true;
    this.topic = options.topic === true;
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
      containerId: this.host.containerId,
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
    let transaction: Transaction | undefined;
    let bytes: Uint8Array;
    try {
      transaction = checkTransaction(options?.tx);
      checkSections(copy);
      bytes = encodeMessage(copy);
    } catch (e) {
      return Promise.reject(e);
    }
    const refused = transaction?.refusal();
    if (refused) return Promise.reject(sendErrorFrom(refused, messageId, false));
    if (!this.shapesKept) {
      this.shapesKept = true;
      keepSendShapesOf(copy, senderTwin);
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
        transaction,
        resolve,
        reject,
      };
      const waiter: SendWaiter = { sender: this, messageId, bytes, ctx };
      transaction?.joinSend(waiter);
      ctx.deadline = new Deadline(options, (_reason, error) => this.sends.expire(ctx, waiter, error), 'send');
      if (ctx.done) return; // already-aborted signal: expired at once
      this.sends.admit(waiter);
    });
  }

  // ------------------------------------------------------------------ connection-facing

  /** @internal */
  attachTo(phys: PhysicalConnection): void {
    const session = phys.engine.begin();
    const link = session.attachSender({
      name: this.name,
      source: { address: this.name },
      target: this.topic
        ? { address: this.address, capabilities: [TOPIC_CAPABILITY] }
        : { address: this.address },
      sndSettleMode: this.presettled ? 2 : 0,
      // failover re-sends in-doubt messages with the same message-id: a broker offering this drops the copy
      desiredCapabilities: [DEDUP_CAPABILITY],
      ...(this.attachProperties ? { properties: this.attachProperties } : {}),
    });
    link.context = this;
    session.context = this;
    this.link = link;
    this.state = 'attaching';
    // replay first: queued and in-doubt entries of this sender, original order, before newer sends
    for (const entry of this.sends.journal.replayOrder()) {
      if (entry.context.sender === this) this.write(entry);
    }
  }

  /** @internal hand a journal entry to the current link (if there is one). */
  write(entry: JournalEntry<PendingSend>): void {
    const link = this.link;
    const ctx = entry.context;
    if (!link || (this.state !== 'attaching' && this.state !== 'attached')) return;
    // a txn-id means nothing on another connection: such a send ends, it is never re-sent
    const refused = ctx.transaction?.refusal(link.session.conn);
    if (refused) {
      this.sends.finish(ctx, undefined, refused);
      return;
    }
    let d: OutgoingDelivery;
    try {
      const state = ctx.transaction?.transferState;
      d = link.send(
        this.nextTag(),
        entry.bytes,
        state ? { settled: this.presettled, state } : { settled: this.presettled },
      );
    } catch (e) {
      // e.g. larger than the peer's max-message-size: never written
      this.sends.finish(
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
    this.host.kick();
  }

  /** @internal journal.markSent once per written delivery (written = may have arrived). */
  syncWritten(ctx: PendingSend): void {
    const d = ctx.delivery;
    if (d?.written && ctx.counted !== d) {
      ctx.counted = d;
      this.sends.markWritten(ctx.seq);
    }
  }

  protected onLinkEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'link-attached': {
        if (ev.link !== this.link) return;
        if (!ev.attach.target) return; // refused: the detach with the error follows
        this.attached();
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
          this.sends.finish(ctx, d.remoteState ?? { type: 'accepted' });
        }
        return;
      }
      default:
        return;
    }
  }

  // ------------------------------------------------------------------ lifecycle hooks

  protected closing(error: Error): void {
    this.rejectAll(error);
  }

  protected connectionLost(): void {
    this.presettledInFlight.clear();
  }

  protected failed(error: Error): void {
    this.rejectAll(error);
  }

  // ------------------------------------------------------------------ internals

  private rejectAll(error: Error): void {
    for (const entry of this.sends.journal.entries()) {
      if (entry.context.sender === this) this.sends.finish(entry.context, undefined, error);
    }
    this.sends.rejectWaiters(this, error);
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
        this.sends.finish(ctx, { type: 'accepted' });
      }
    }
  }

  private nextTag(): Uint8Array {
    const n = this.tagCounter++ >>> 0;
    // bytes set directly: reading `.buffer` of a small typed array moves it off the V8 heap
    const tag = new Uint8Array(4);
    tag[0] = n >>> 24;
    tag[1] = n >>> 16;
    tag[2] = n >>> 8;
    tag[3] = n;
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
