/**
 * Receiving side of a link: credit granting and drain, reassembly of multi-frame transfers up to
 * the max message size, settlement per rcv-settle-mode.
 */
import { Buffer } from 'node:buffer';
import type { Attach, DeliveryState, Flow, Transfer } from './codec-port.js';
import { Condition, serialDiff } from './conditions.js';
import { IncomingDelivery } from './delivery.js';
import { Link } from './link.js';

interface Partial {
  id: number;
  tag: Uint8Array;
  format: number;
  settled: boolean;
  state: DeliveryState | undefined;
  second: boolean;
  chunks: Uint8Array[];
  size: number;
}

export class ReceiverLink extends Link {
  readonly role = 'receiver' as const;
  /** We sent a flow with drain and the sender has not answered it yet. */
  draining = false;
  private echoRequested = false;
  private partial: Partial | undefined = undefined;
  /**
   * Hand single-frame payloads out as views of the socket chunk they arrived in, small ones too.
   * Default false: a small payload is copied (ownedBytes), so that a message kept for long does
   * not pin a much larger chunk. For a handler that copies what it keeps anyway (the broker's
   * publisher links store a rewritten copy of every message), and for the client's receivers
   * unless ReceiverOptions.copyBodies (docs/architecture.md#client-reads).
   */
  keepPayloadViews = false;

  /**
   * Messages the sender last said it holds for this link (its flow's `available`), less the
   * transfers since: with credit granted, the sender owes us deliveries.
   */
  remoteAvailable = 0;

  /** Largest message we reassemble (ours, or the engine default when we declared none). */
  get maxMessageSize(): number {
    return this.local?.maxMessageSize || this.session.conn.defaultMaxMessageSize;
  }

  /**
   * Set link-credit to `credit` (absolute) and optionally ask the sender to drain it; `echo` asks
   * the sender to answer with its own flow state (available, delivery-count).
   */
  flow(credit: number, drain = false, echo = false): void {
    this.credit = credit >>> 0;
    this.draining = drain;
    if (echo) this.echoRequested = true;
    this.session.markFlow(this);
  }

  /** Add to the current link-credit. */
  addCredit(n: number): void {
    this.flow(this.credit + n, this.draining);
  }

  protected override onAttached(): void {
    this.deliveryCount = this.remote?.initialDeliveryCount ?? 0;
    // credit granted before the peer's attach was held back (its delivery-count was unknown)
    if (this.credit > 0 || this.draining) this.session.markFlow(this);
  }

  /** @internal a transfer frame for this link (session window already accounted). */
  onTransfer(t: Transfer, payload: Uint8Array | undefined): void {
    if (this.state !== 'attached') return; // detaching: drop
    let p = this.partial;
    if (t.aborted) {
      this.partial = undefined;
      if (p || t.more)
        this.session.conn.emit({
          type: 'delivery-aborted',
          link: this,
          deliveryTag: p?.tag ?? t.deliveryTag,
        });
      if (!p && t.deliveryId !== undefined) this.consumeCredit();
      return;
    }
    if (!p) {
      if (t.deliveryId === undefined || t.deliveryTag === undefined) {
        this.detach({
          condition: Condition.invalidField,
          description: 'first transfer without delivery-id/tag',
        });
        return;
      }
      if (!this.consumeCredit()) return;
      const settled = t.settled === true;
      // second only if we asked for it and the sender's attach did not answer first (RabbitMQ
      // answers first): a delivery settled "second" against a "first" sender would never settle
      const asked = this.local?.rcvSettleMode ?? 0;
      const negotiated = Math.min(asked, this.remote?.rcvSettleMode ?? asked);
      const mode = t.rcvSettleMode ?? negotiated;
      const size = payload ? payload.length : 0;
      if (!t.more) {
        if (size > this.maxMessageSize) {
          this.tooBig(size);
          return;
        }
        const bytes = payload ? (this.keepPayloadViews ? payload : ownedBytes(payload)) : new Uint8Array(0);
        this.complete(t.deliveryId, t.deliveryTag, t.messageFormat ?? 0, settled, t.state, mode === 1, bytes);
        return;
      }
      p = {
        id: t.deliveryId,
        tag: t.deliveryTag,
        format: t.messageFormat ?? 0,
        settled,
        state: t.state,
        second: mode === 1,
        chunks: [],
        size: 0,
      };
      this.partial = p;
    } else {
      if (t.deliveryId !== undefined && t.deliveryId !== p.id) {
        this.partial = undefined;
        const description = `delivery ${t.deliveryId} started before delivery ${p.id} was complete`;
        this.detach({ condition: Condition.invalidField, description });
        this.session.conn.reportError('link', Condition.invalidField, description, {
          session: this.session,
          link: this,
        });
        return;
      }
      if (t.settled) p.settled = true;
    }
    if (payload && payload.length > 0) {
      p.size += payload.length;
      if (p.size > this.maxMessageSize) {
        this.partial = undefined;
        this.tooBig(p.size);
        return;
      }
      p.chunks.push(payload);
    }
    if (t.state) p.state = t.state;
    if (t.more) return;
    this.partial = undefined;
    const bytes = concat(p.chunks, p.size);
    this.complete(p.id, p.tag, p.format, p.settled, p.state, p.second, bytes);
  }

  private consumeCredit(): boolean {
    if (this.credit <= 0) {
      this.detach({ condition: Condition.transferLimitExceeded, description: 'transfer beyond link-credit' });
      this.session.conn.reportError('link', Condition.transferLimitExceeded, 'transfer beyond link-credit', {
        session: this.session,
        link: this,
      });
      return false;
    }
    this.credit--;
    this.deliveryCount = (this.deliveryCount + 1) >>> 0;
    if (this.remoteAvailable > 0) this.remoteAvailable--;
    return true;
  }

  private tooBig(size: number): void {
    const description = `message of ${size} bytes exceeds max-message-size ${this.maxMessageSize}`;
    this.detach({ condition: Condition.messageSizeExceeded, description });
    this.session.conn.reportError('link', Condition.messageSizeExceeded, description, {
      session: this.session,
      link: this,
    });
  }

  private complete(
    id: number,
    tag: Uint8Array,
    format: number,
    settled: boolean,
    state: DeliveryState | undefined,
    second: boolean,
    bytes: Uint8Array,
  ): void {
    const d = new IncomingDelivery(this, id, tag, bytes, format, settled, second, state);
    if (settled) d.settled = true;
    else this.session.trackIncoming(d);
    this.session.conn.emit({ type: 'message', link: this, delivery: d });
  }

  /** @internal */
  dispose(d: IncomingDelivery, state: DeliveryState | undefined, settled: boolean): void {
    if (d.settled) return;
    d.localState = state;
    if (settled || d.remoteSettled) {
      d.settled = true;
      this.session.untrackIncoming(d);
    }
    // once the sender settled, it forgot the delivery: nothing to tell it
    if (!d.remoteSettled) this.session.queueDisposition(true, d.id, state, settled);
  }

  /** @internal the sender's disposition for a delivery we received. */
  onDisposition(d: IncomingDelivery, state: DeliveryState | undefined, settled: boolean): void {
    if (state) d.remoteState = state;
    if (settled) {
      d.remoteSettled = true;
      // rcv-settle-mode second: our outcome went out unsettled; the sender settled, so do we
      if (d.localState !== undefined && !d.settled) {
        d.settled = true;
        this.session.untrackIncoming(d);
      }
    }
  }

  override onFlow(flow: Flow): void {
    if (flow.deliveryCount !== undefined) {
      const advanced = serialDiff(flow.deliveryCount, this.deliveryCount);
      if (advanced > 0) {
        this.credit = Math.max(0, this.credit - advanced);
        this.deliveryCount = flow.deliveryCount;
      }
    }
    if (flow.available !== undefined) this.remoteAvailable = flow.available;
    let drained = false;
    if (this.draining && flow.drain && (flow.linkCredit ?? 0) === 0) {
      this.draining = false;
      this.credit = 0;
      drained = true;
    }
    if (flow.echo) this.session.markFlow(this);
    this.session.conn.emit({ type: 'link-flow', link: this, drained });
  }

  override fillFlow(flow: Flow): boolean {
    flow.handle = this.handle;
    flow.deliveryCount = this.deliveryCount;
    flow.linkCredit = this.credit;
    if (this.draining) flow.drain = true;
    if (this.echoRequested) {
      flow.echo = true;
      this.echoRequested = false;
    }
    return true;
  }

  protected override onLocalAttach(_a: Attach): void {}
}

/**
 * The reader's payload is a view of a socket chunk (never reused), so keeping it is safe; but a
 * small view would pin a much larger chunk in memory, so those are copied.
 */
export function ownedBytes(payload: Uint8Array): Uint8Array {
  if (payload.length * 2 >= payload.buffer.byteLength) return payload;
  // copied into Node's pool for small sizes (far cheaper than a fresh ArrayBuffer); payload.slice()
  // would not do (on a Buffer it is a view), and Buffer.from(payload) takes its array-like path,
  // measured 2.5x slower per 1 KiB copy than allocUnsafe + set on Node 20
  const copy = Buffer.allocUnsafe(payload.length);
  copy.set(payload);
  return copy;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return ownedBytes(chunks[0]);
  const out = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
