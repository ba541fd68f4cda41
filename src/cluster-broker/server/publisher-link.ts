/**
 * A publisher's link (the client sends, we receive): every complete message becomes an enqueue
 * event; the transfer is settled only once the backend says the enqueue is committed
 * (accepted / duplicate -> accepted, refused -> rejected with the condition). A failed submit
 * settles nothing and closes the connection (docs/delivery-contract.md#unknown-outcome).
 */
import { type DeliveryState, type MessageHeader, peekMessage, withHeader } from '../../codec/index.js';
import { messageIdKey } from '../../failover/message-id.js';
import { ACCEPTED, type IncomingDelivery, type ReceiverLink } from '../../protocol/index.js';
import type { EnqueueEvent } from '../core/events.js';
import type { EnqueueResult } from '../core/results.js';
import type { LinkHandler, LinkHost } from './link-host.js';

export class PublisherLink implements LinkHandler {
  /** Messages submitted and not yet settled. */
  private inflight = 0;
  private closed = false;

  constructor(
    private readonly host: LinkHost,
    private readonly link: ReceiverLink,
    readonly queue: string,
  ) {}

  /** Grants the first credit window (call after accept). */
  start(): void {
    this.link.flow(this.host.ctx.opts.publisherCredit);
  }

  close(): void {
    this.closed = true;
  }

  onMessage(d: IncomingDelivery): void {
    const { backend, counters } = this.host.ctx;
    counters.messagesIn++;
    let event: EnqueueEvent;
    try {
      event = this.enqueueEvent(d.payload, backend.now());
    } catch (err) {
      const description = `undecodable message: ${(err as Error).message ?? String(err)}`;
      if (!d.remoteSettled)
        d.disposition({ type: 'rejected', error: { condition: 'amqp:decode-error', description } });
      this.topUp();
      return;
    }
    if (d.remoteSettled) {
      // pre-settled (at-most-once): nobody waits for an outcome
      backend.submit(event).catch((err: unknown) => this.host.fail(err));
      this.topUp();
      return;
    }
    this.inflight++;
    backend
      .submit(event)
      .then(
        (result) => this.settle(d, result),
        (err: unknown) => this.host.fail(err),
      )
      .catch((err: unknown) => this.host.internalError(err));
  }

  private enqueueEvent(bytes: Uint8Array, now: number): EnqueueEvent {
    const { header, properties, headerEnd } = peekMessage(bytes);
    const event: EnqueueEvent = {
      type: 'enqueue',
      leaderTime: now,
      queue: this.queue,
      message: storedForm(bytes, header, headerEnd),
    };
    const key = messageIdKey(properties?.messageId);
    if (key !== undefined) event.dedupKey = key;
    let expiresAt: number | undefined;
    const ttl = header?.ttl;
    if (typeof ttl === 'number' && ttl > 0) expiresAt = now + ttl;
    const abs = properties?.absoluteExpiryTime;
    if (abs instanceof Date && !Number.isNaN(abs.getTime())) {
      const t = abs.getTime();
      if (t > 0 && (expiresAt === undefined || t < expiresAt)) expiresAt = t;
    }
    if (expiresAt !== undefined) event.expiresAt = expiresAt;
    if (header?.deliveryCount) event.deliveryCount = header.deliveryCount;
    return event;
  }

  private settle(d: IncomingDelivery, result: EnqueueResult): void {
    this.inflight--;
    if (!d.settled) {
      const state: DeliveryState =
        result.status === 'refused'
          ? { type: 'rejected', error: { condition: result.condition, description: result.description } }
          : ACCEPTED;
      d.disposition(state);
    }
    this.topUp();
    this.host.scheduleFlush();
  }

  /** Keeps credit + unsettled at the window: a publisher can never run ahead of the commits by more. */
  private topUp(): void {
    if (this.closed || this.link.state !== 'attached') return;
    const window = this.host.ctx.opts.publisherCredit;
    if (this.link.credit + this.inflight <= window >>> 1) {
      this.link.flow(window - this.inflight);
      this.host.scheduleFlush();
    }
  }
}

/**
 * What the queue stores: the message with first-acquirer set in its header (only the header
 * changes), in its own exactly-sized buffer. The first delivery then goes out as stored, with no
 * rewrite or copy; later ones rewrite the header (consumer-link.ts).
 *
 * The copy matters for memory too: the engine hands over views into socket chunks, and one
 * queued message must not keep a whole read chunk alive.
 */
function storedForm(bytes: Uint8Array, header: MessageHeader | undefined, headerEnd: number): Uint8Array {
  if (header?.firstAcquirer === true) {
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
    return new Uint8Array(bytes);
  }
  const head = withHeader(EMPTY, { ...header, firstAcquirer: true });
  const out = new Uint8Array(head.length + bytes.length - headerEnd);
  out.set(head, 0);
  out.set(bytes.subarray(headerEnd), head.length);
  return out;
}

const EMPTY = new Uint8Array(0);
