/**
 * Request/reply over AMQP: requests go to a service address with `replyTo` set to this
 * requester's reply queue and a `messageId`; the service answers to `replyTo` with
 * `correlationId` = the request's message-id. Replies are matched by correlation-id, accepted,
 * and handed back; a reply nobody waits for (its request timed out) is accepted and dropped.
 *
 * The reply queue is a named queue (`replyTo`, default a name unique to this requester). The
 * option object is kept open for a broker-assigned (dynamic) reply queue.
 */
import { randomUUID } from 'node:crypto';
import type { Message, MessageBody } from '../codec/message.js';
import type { MessageId } from '../codec/message-id.js';
import { messageIdKey } from '../codec/message-id.js';
import { ClientError } from '../errors.js';
import type { Connection, Delivery, Receiver, Sender } from './api.js';
import { type Settle, waitQueued } from './deadline.js';
import type { CallOptions } from './types.js';

export interface RequesterOptions extends CallOptions {
  /** The queue replies come back on. Default: `quorate-replies-<uuid>`, unique to this requester. */
  replyTo?: string;
  /** Prefetch of the reply receiver. Default 100. */
  credit?: number;
}

/** A request/reply client for one service address, from {@link createRequester}. */
export interface Requester<Reply = MessageBody> extends AsyncDisposable {
  /** The reply address put in every request's `replyTo`. */
  readonly replyTo: string;
  /**
   * Send `message` and wait for the reply whose correlation-id is its message-id. Rejects with the
   * send's SendError, or 'quorate:timeout' / 'quorate:aborted' when no reply comes in time.
   */
  request<T = MessageBody>(message: Message<T>, options?: CallOptions): Promise<Delivery<Reply>>;
  /** Close the sender and the reply receiver; pending requests reject with 'quorate:closed'. */
  close(): Promise<void>;
}

/** Open a requester for the service at `address` (a sender there and a receiver on the reply queue). */
export async function createRequester<Reply = MessageBody>(
  conn: Connection,
  address: string,
  options: RequesterOptions = {},
): Promise<Requester<Reply>> {
  const replyTo = options.replyTo ?? `quorate-replies-${randomUUID()}`;
  const call = { timeoutMs: options.timeoutMs, signal: options.signal };
  const sender = await conn.openSender(address, call);
  let receiver: Receiver<Reply>;
  try {
    receiver = await conn.openReceiver<Reply>(replyTo, { ...call, credit: options.credit ?? 100 });
  } catch (e) {
    await sender.close().catch(() => undefined);
    throw e;
  }
  const router = new ReplyRouter<Reply>(sender, receiver, { request: 'request', owner: 'requester' });
  return {
    replyTo,
    request: <T = MessageBody>(message: Message<T>, call?: CallOptions) =>
      router.request({ ...message, messageId: message.messageId ?? randomUUID(), replyTo }, call),
    close: () => router.close(),
    [Symbol.asyncDispose]: () => router.close(),
  };
}

/** How a {@link ReplyRouter}'s errors name what it serves. */
export interface ReplyRouterNames {
  /** One request, in timeout errors: `request`, `management request`. */
  request: string;
  /** Its owner, in 'quorate:closed' errors: `requester`, `management`. */
  owner: string;
}

/**
 * @internal Sends requests on `sender` and hands each the reply `receiver` gets whose
 * correlation-id is the request's message-id; every reply is accepted, one nobody waits for (its
 * request timed out, or not ours) is dropped. The one home of this matching: createRequester()
 * and the management client (management.ts) both use it.
 */
export class ReplyRouter<Reply = MessageBody> {
  private readonly pending = new Map<string, Settle<Delivery<Reply>>>();
  /** Why no reply can come any more (closed, or the reply receiver ended): later requests fail at once. */
  private ended: Error | undefined;

  constructor(
    private readonly sender: Sender,
    private readonly receiver: Receiver<Reply>,
    private readonly names: ReplyRouterNames,
  ) {
    void this.route();
  }

  /**
   * Sends `message` and waits for its reply. Rejects with the send's error, or 'quorate:timeout'
   * / 'quorate:aborted' when no reply comes in time, or with the error that ended the reply
   * receiver ('quorate:closed' when its connection or this router closed).
   */
  async request<T = MessageBody>(
    message: Message<T> & { messageId: MessageId },
    options?: CallOptions,
  ): Promise<Delivery<Reply>> {
    const key = messageIdKey(message.messageId);
    if (key === undefined) throw new ClientError('quorate:illegal-state', 'request needs a usable messageId');
    if (this.ended) throw this.ended;
    const reply = waitQueued<Delivery<Reply>>(
      options,
      this.names.request,
      (settle) => this.pending.set(key, settle),
      () => this.pending.delete(key),
    );
    reply.catch(() => undefined); // rejected below if the send fails; awaited by the caller
    try {
      await this.sender.send(message, options);
    } catch (e) {
      this.pending.get(key)?.reject(e as Error);
      this.pending.delete(key);
    }
    return reply;
  }

  /** Closes the sender and the reply receiver; pending requests reject with 'quorate:closed'. */
  async close(): Promise<void> {
    this.end(new ClientError('quorate:closed', `${this.names.owner} closed`));
    await Promise.all([this.sender.close(), this.receiver.close()]);
  }

  /** No reply can come any more: every pending request, and every later one, fails with `error`. */
  private end(error: Error): void {
    this.ended ??= error;
    for (const p of this.pending.values()) p.reject(this.ended);
    this.pending.clear();
  }

  /** Hands each reply to its request until the reply receiver ends; then ends the router. */
  private async route(): Promise<void> {
    try {
      for await (const d of this.receiver) {
        const key = messageIdKey(d.message.correlationId);
        const waiter = key === undefined ? undefined : this.pending.get(key);
        void d.accept(); // its rejection is marked handled (delivery.ts)
        if (!waiter || key === undefined) continue; // late (timed out) or not ours: dropped
        this.pending.delete(key);
        waiter.resolve(d);
      }
      // the iteration ends when the receiver is closed (by close(), or by whoever else holds it)
      this.end(new ClientError('quorate:closed', `${this.names.owner}'s reply receiver closed`));
    } catch (e) {
      // it fails with the link's error: the connection closed ('quorate:closed') or failed for
      // good, or the broker detached the reply link
      this.end(e as Error);
    }
  }
}
