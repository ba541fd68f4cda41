/**
 * The logical Receiver: an async iterable of Deliveries from one link name and address, across
 * any number of physical connections. Credit is a prefetch window topped up automatically
 * (CreditWindow), or granted by the application (credit 0 + addCredit); after a failover it is
 * re-granted by the contract's rule. Redeliveries are deduplicated by message-id (ReceiverDedup).
 * It asks for rcv-settle-mode second (confirmed accept) and falls back to first where the
 * broker refuses it; `settleMode` / `confirmedAccept` tell which is in force.
 *
 * This file is its link-facing side (attach, engine events, arrivals, settlement, failure); the
 * class is a chain, one job per file, so the per-delivery paths stay plain method calls on one
 * object: receiver-fields.ts (every field, the constructor) and receiver-api.ts (credit, drain,
 * receive, iteration).
 */
import type { AmqpErrorBody, DeliveryState, Source } from '../codec/contract.js';
import { decodeMessage, type Message, type MessageBody } from '../codec/message.js';
import { ClientError } from '../errors.js';
import { type CreditFlow, receiverDedupKey } from '../failover/index.js';
import {
  type EngineEvent,
  type IncomingDelivery,
  type ReceiverLink,
  selectorFilter,
} from '../protocol/index.js';
import {
  DURABLE_UNSETTLED_STATE,
  EXPIRY_NEVER,
  HOLD_UNSETTLED_CAPABILITY,
  TOPIC_CAPABILITY,
} from '../wire-extensions.js';
import type { Receiver as PublicReceiver, ReceivedMessage } from './api.js';
import { Delivery, type DeliveryOwner } from './delivery.js';
import { publish, receiveChannel } from './diagnostics.js';
import { isPermanentDetach, type LinkHost } from './link-base.js';
import { now, type PhysicalConnection } from './physical.js';
import type { BatchWaiter, OneWaiter } from './receive-queue.js';
import { ReceiverApi } from './receiver-api.js';
import { keepShapesOf } from './shape-keeper.js';

/** A Receiver holding nothing, for shape-keeper.ts: its fields are its constructor's alone. */
const receiverTwin = (nothing: object): object => new Receiver(nothing as LinkHost, '', {}, '');

/**
 * A receiving link, from {@link Connection.openReceiver}. Iterate it with `for await`, or call
 * {@link Receiver.receive} (one delivery, or with `max` an array of them); settle each
 * {@link Delivery}. It re-attaches after failover and never hands out one message-id twice
 * (docs/delivery-contract.md#receiver-dedup). `Receiver<T>`:
 * deliveries typed `Delivery<T>`, a type-level promise (openReceiver<T>()).
 */
export class Receiver<T = MessageBody>
  extends ReceiverApi<T>
  implements AsyncIterable<Delivery<T>>, DeliveryOwner, PublicReceiver<T>
{
  // ------------------------------------------------------------------ DeliveryOwner

  /** @internal */
  get containerId(): string {
    return this.host.containerId;
  }

  /** @internal */
  isLive(transfer: IncomingDelivery): boolean {
    return transfer.link === this.link && transfer.link.state === 'attached';
  }

  /** @internal */
  get confirmsSettlement(): boolean {
    return this.settleMode === 'second';
  }

  /** @internal */
  onSettled(delivery: Delivery<unknown>, state: DeliveryState): void {
    this.dedup?.onSettled(delivery.dedupKey, state, now(), delivery.dedupRow);
  }

  /** @internal */
  onAwaiting(delivery: Delivery<unknown>): void {
    this.awaitingConfirmation.add(delivery as Delivery<T>);
  }

  /** @internal */
  onFinished(delivery: Delivery<unknown>): void {
    this.awaitingConfirmation.delete(delivery as Delivery<T>);
  }

  /**
   * @internal Outcomes are written once per tick, not once per settlement: a `for await` loop
   * settles its deliveries one microtask apart, and a write per microtask would put each
   * disposition in a packet of its own (the engine coalesces the queued ones into ranges).
   * `now`: queue them as frames at once, ahead of anything sent later (a transactional outcome,
   * which the discharge must follow even when it is sent before the batch is written).
   */
  flush(now = false): void {
    if (now) {
      this.link?.session.flush();
      this.host.kick();
      return;
    }
    if (this.flushQueued) return;
    this.flushQueued = true;
    process.nextTick(() => {
      this.flushQueued = false;
      this.host.kick();
    });
  }

  // ------------------------------------------------------------------ connection-facing

  /** @internal */
  override shouldAttach(phys: PhysicalConnection): boolean {
    if (!super.shouldAttach(phys)) return false;
    return this.attachFilter ? this.attachFilter(phys) : true;
  }

  /** @internal */
  attachTo(phys: PhysicalConnection): void {
    const session = phys.engine.begin();
    this.askedSecond = this.wantSecond;
    const link = session.attachReceiver({
      name: this.name,
      source: receiverSource(this.address, this.dynamicUnassigned, this.selector, this.subscribes),
      target: { address: this.name },
      rcvSettleMode: this.askedSecond ? 1 : 0,
      ...(this.holdUnsettled ? { desiredCapabilities: [HOLD_UNSETTLED_CAPABILITY] } : {}),
      ...(this.attachProperties ? { properties: this.attachProperties } : {}),
    });
    link.keepPayloadViews = !this.copyBodies;
    link.context = this;
    session.context = this;
    this.link = link;
    this.state = 'attaching';
  }

  protected onLinkEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'link-attached': {
        if (ev.link !== this.link) return;
        if (!ev.attach.source) return; // refused: the detach with the error follows
        if (this.dynamicUnassigned && typeof ev.attach.source.address === 'string') {
          // re-attached after a failover to this address, no longer dynamic
          this.address = ev.attach.source.address;
          this.dynamicUnassigned = false;
        }
        // the broker's attach says what it does: second only if it echoes second
        this.settleMode = this.askedSecond && ev.attach.rcvSettleMode === 1 ? 'second' : 'first';
        this.applyFlow(this.credit.onAttached());
        this.attached();
        return;
      }
      case 'message':
        if (ev.link === this.link) this.onMessage(ev.delivery);
        return;
      case 'delivery-update': {
        const t = ev.delivery as IncomingDelivery;
        if (t.remoteSettled) (t.context as Delivery<T> | undefined)?.onRemoteSettled(t);
        return;
      }
      case 'link-flow':
        if (ev.link === this.link && ev.drained) {
          this.drainWaiters.resolveAll();
          this.applyFlow(this.credit.onDrained());
        }
        return;
      default:
        return;
    }
  }

  // ------------------------------------------------------------------ lifecycle hooks

  protected closing(error: Error): void {
    this.rejectDrains(error);
    this.endIteration(undefined);
  }

  protected connectionLost(error: Error): void {
    this.rejectDrains(error);
    this.lostUnderLiveConnection();
  }

  protected failed(error: Error): void {
    this.rejectDrains(error);
    this.lostUnderLiveConnection();
    this.endIteration(error);
  }

  /** The broker confirms nothing after the detach: settlements still waiting are in doubt. */
  protected override closed(): void {
    for (const d of this.awaitingConfirmation) d.onConnectionLost('receiver closed');
  }

  /** Deliveries not handed out are dropped; handed-out ones can no longer be confirmed. */
  protected override lostUnderLiveConnection(): void {
    this.dropBuffered();
    for (const d of this.awaitingConfirmation) d.onConnectionLost();
  }

  /** A broker that refuses rcv-settle-mode second (RabbitMQ ends the session): retry in first. */
  protected override retryRefusedAttach(error: AmqpErrorBody | undefined, link: ReceiverLink): boolean {
    const modeRefused =
      this.askedSecond && (error?.condition === 'amqp:not-implemented' || !isPermanentDetach(error, false));
    const phys = modeRefused ? this.host.physicalFor(link.session.conn) : undefined;
    if (!phys) return false;
    this.host.logger?.info?.({ link: this.name, error }, 'rcv-settle-mode second refused; using first');
    this.wantSecond = false;
    this.attachTo(phys);
    phys.pump();
    return true;
  }

  // ------------------------------------------------------------------ internals

  private onMessage(t: IncomingDelivery): void {
    this.credit.onTransfer();
    let message: Message;
    try {
      message = decodeMessage(t.payload);
    } catch (e) {
      // not a message we can hand out: reject it so the broker dead-letters it
      t.disposition(
        {
          type: 'rejected',
          error: { condition: 'amqp:decode-error', description: String((e as Error).message) },
        },
        true,
      );
      this.applyFlow(this.credit.onSuppressed());
      return;
    }
    const delivery = new Delivery<T>(this, t, message as ReceivedMessage<T>);
    t.context = delivery;
    const dedup = this.dedup;
    const key = dedup === undefined ? undefined : receiverDedupKey(message.messageId);
    // seen when its bytes arrived: the read's time stamp, not one more clock call per delivery
    const decision =
      dedup === undefined || key === undefined ? -1 : dedup.admit(key, delivery, t.link.session.conn.clock);
    if (typeof decision === 'number') {
      // a row, not an object: the window keeps nothing per message but the key
      delivery.dedupKey = key;
      delivery.dedupRow = decision;
      if (!this.shapesKept) {
        this.shapesKept = true;
        keepShapesOf(delivery as Delivery<unknown>, t, receiverTwin);
      }
      this.queue.push(delivery);
      return;
    }
    this.duplicatesSuppressed++;
    if (decision.action === 'settle') {
      t.disposition(decision.outcome, !this.confirmsSettlement);
    } else {
      t.context = decision.pending;
      decision.pending.bind(t);
    }
    this.host.kick();
    this.applyFlow(this.credit.onSuppressed());
  }

  protected next(w: OneWaiter<Delivery<T>> | BatchWaiter<Delivery<T>>): void {
    if (this.queue.serveNow(w)) return;
    if (this.failure) {
      w.reject(this.failure);
      return;
    }
    if (this.state === 'closing' || this.state === 'closed') {
      this.queue.endOne(w);
      return;
    }
    this.queue.wait(w);
  }

  protected closedError(): Error {
    return this.failure ?? new ClientError('quorate:closed', `receiver '${this.name}' closed`);
  }

  /** @internal */
  handOut(d: Delivery<T>): Delivery<T> {
    publish(receiveChannel, () => ({
      message: d.message,
      address: this.address,
      containerId: this.containerId,
    }));
    this.dedup?.onHandedOut(d.dedupKey, d, d.dedupRow);
    this.applyFlow(this.credit.onHandedOut());
    return d;
  }

  protected applyFlow(flow: CreditFlow | undefined): void {
    const link = this.link;
    if (!flow || !link || link.state !== 'attached') return;
    // keep a drain in progress: a top-up must not cancel it
    link.flow(flow.linkCredit, link.draining);
    this.host.kick();
  }

  private dropBuffered(): void {
    this.credit.onDetached();
    this.dedup?.connectionLost();
    this.queue.clear();
  }

  private endIteration(error: Error | undefined): void {
    this.queue.endWaiters(error);
    if (!error) for (const d of this.queue.clear()) this.dedup?.forgetPending(d.dedupKey, d.dedupRow);
  }

  private rejectDrains(error: Error): void {
    this.drainWaiters.rejectAll(error);
  }
}

/**
 * The source we attach with: a dynamic node not yet named, or an address; a selector as a
 * filter; a topic subscription's capability and durability (docs/topics.md).
 */
function receiverSource(
  address: string,
  dynamic: boolean,
  selector: string | undefined,
  subscribes: 'durable' | 'non-durable' | undefined,
): Source {
  const source: Source = dynamic ? { dynamic: true } : { address };
  if (selector !== undefined) source.filter = selectorFilter(selector);
  if (subscribes !== undefined) source.capabilities = [TOPIC_CAPABILITY];
  if (subscribes === 'durable') {
    source.durable = DURABLE_UNSETTLED_STATE;
    source.expiryPolicy = EXPIRY_NEVER;
  }
  return source;
}
