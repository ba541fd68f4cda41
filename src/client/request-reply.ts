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
  return new ReplyRouter<Reply>(sender, receiver, replyTo);
}

class ReplyRouter<Reply> implements Requester<Reply> {
  private readonly pending = new Map<string, Settle<Delivery<Reply>>>();

  constructor(
    private readonly sender: Sender,
    private readonly receiver: Receiver<Reply>,
    readonly replyTo: string,
  ) {
    void this.route();
  }

  async request<T = MessageBody>(message: Message<T>, options?: CallOptions): Promise<Delivery<Reply>> {
    const messageId: MessageId = message.messageId ?? randomUUID();
    const key = messageIdKey(messageId);
    if (key === undefined) throw new ClientError('quorate:illegal-state', 'request needs a usable messageId');
    const reply = waitQueued<Delivery<Reply>>(
      options,
      'request',
      (settle) => this.pending.set(key, settle),
      () => this.pending.delete(key),
    );
    reply.catch(() => undefined); // rejected below if the send fails; awaited by the caller
    try {
      await this.sender.send({ ...message, messageId, replyTo: this.replyTo }, options);
    } catch (e) {
      this.pending.get(key)?.reject(e as Error);
      this.pending.delete(key);
    }
    return reply;
  }

  async close(): Promise<void> {
    const error = new ClientError('quorate:closed', 'requester closed');
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    await Promise.all([this.sender.close(), this.receiver.close()]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async route(): Promise<void> {
    try {
      for await (const d of this.receiver) {
        const key = messageIdKey(d.message.correlationId);
        const waiter = key === undefined ? undefined : this.pending.get(key);
        void d.accept();
        if (!waiter || key === undefined) continue; // late (timed out) or not ours: dropped
        this.pending.delete(key);
        waiter.resolve(d);
      }
    } catch (e) {
      for (const p of this.pending.values()) p.reject(e as Error);
      this.pending.clear();
    }
  }
}
