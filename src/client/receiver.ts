/**
 * The logical Receiver: an async iterable of Deliveries from one link name and address, across
 * any number of physical connections. Credit is a prefetch window topped up automatically
 * (CreditWindow), or granted by the application (credit 0 + addCredit); after a failover it is
 * re-granted by the contract's rule. Redeliveries are deduplicated by message-id (ReceiverDedup).
 * It asks for rcv-settle-mode second (confirmed accept) and falls back to first where the
 * broker refuses it; `settleMode` / `confirmedAccept` tell which is in force.
 */
import type { AmqpErrorBody, DeliveryState, Fields, Source } from '../codec/contract.js';
import { decodeMessage, type Message, type MessageBody } from '../codec/message.js';
import { ArgumentRangeError, ArgumentTypeError, ClientError } from '../errors.js';
import { type CreditFlow, CreditWindow, ReceiverDedup, receiverDedupKey } from '../failover/index.js';
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
import { waitQueued } from './deadline.js';
import { Delivery, type DeliveryOwner } from './delivery.js';
import { publish, receiveChannel } from './diagnostics.js';
import { isPermanentDetach, type LinkHost, LogicalLink, Waiters } from './link-base.js';
import { now, type PhysicalConnection } from './physical.js';
import { type BatchWaiter, type OneWaiter, ReceiveQueue } from './receive-queue.js';
import { keepShapesOf } from './shape-keeper.js';
import type { CallOptions, ReceiveBatchOptions, ReceiverOptions, SettleMode } from './types.js';

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
  extends LogicalLink<ReceiverLink>
  implements AsyncIterable<Delivery<T>>, DeliveryOwner, PublicReceiver<T>
{
  /** The receiver settle mode in force: 'second' when the broker confirms our outcomes. */
  settleMode: SettleMode = 'first';
  /** @internal link properties of the attach (the management pair's `paired`). */
  attachProperties: Fields | undefined;
  /** Messages handed out and suppressed as duplicates so far (for observability and tests). */
  duplicatesSuppressed = 0;
  private readonly credit: CreditWindow;
  private readonly dedup: ReceiverDedup<Delivery<T>> | undefined;
  /** Ask for rcv-settle-mode second on the next attach. */
  private wantSecond: boolean;
  private askedSecond = false;
  private readonly queue = new ReceiveQueue<Delivery<T>>((d) => this.handOut(d), now);
  private readonly drainWaiters = new Waiters();
  /**
   * Settled by the application, the broker's confirmation still awaited: those fail if the
   * connection dies. Only these are tracked (a delivery not settled yet, or settled with nothing
   * to wait for, has nothing to fail): no Set entry per delivery in rcv-settle-mode first.
   */
  private readonly awaitingConfirmation = new Set<Delivery<T>>();
  /** A kick to write settlements is queued for the end of this tick. */
  private flushQueued = false;
  /**
   * Whether this receiver's first arrival left its twin (shape-keeper.ts). V8 holds an object's
   * hidden class only through its live objects: once none of a receive's deliveries is alive at a
   * full collection (a quiet spell, the app done with a batch), their classes die and V8 discards
   * the optimized code of the whole receive path (--trace-deopt "weak objects"), compiling it
   * again on the next burst. A twin of one arrival, holding nothing, keeps those classes.
   */
  private shapesKept = false;

  /** For a dynamic receiver: true until the broker named its node (then `address` is set). */
  private dynamicUnassigned: boolean;
  private readonly selector: string | undefined;
  /** A topic subscription, and whether it is durable (docs/topics.md). */
  private readonly subscribes: 'durable' | 'non-durable' | undefined;
  private readonly holdUnsettled: boolean;
  /** ReceiverOptions.copyBodies: small bodies copied out of the read slab, not handed out as views */
  private readonly copyBodies: boolean;

  /** @internal use Connection.openReceiver(). */
  constructor(
    host: LinkHost,
    /** The address (queue name) the link receives from; for a dynamic receiver, the broker's name for its node once attached. */
    public address: string,
    options: ReceiverOptions,
    name: string,
    private readonly attachFilter?: (phys: PhysicalConnection) => boolean,
  ) {
    super(host, 'receiver', subscriptionName(address, options) ?? options.name ?? name);
    this.credit = new CreditWindow({ credit: options.credit ?? 100 });
    this.dedup = options.dedup === false ? undefined : new ReceiverDedup<Delivery<T>>(options.dedup ?? {});
    this.wantSecond = options.confirmAccept !== false;
    this.dynamicUnassigned = options.dynamic === true;
    this.selector = options.selector;
    this.holdUnsettled = options.holdUnsettled === true;
    this.copyBodies = options.copyBodies === true;
    this.subscribes =
      options.topic === true ? (options.durable === true ? 'durable' : 'non-durable') : undefined;
  }

  /** A durable subscription outlives close(); unsubscribe() ends it. */
  protected override get closesTerminus(): boolean {
    return this.subscribes !== 'durable';
  }

  /**
   * End this receiver's topic subscription: detach with closed=true, so the broker deletes the
   * subscription and its messages (for a durable one the only way; close() keeps it).
   */
  unsubscribe(options?: CallOptions): Promise<void> {
    return this.detachForGood(true, options);
  }

  /** True when accept() resolves only after the broker confirmed it (rcv-settle-mode second). */
  get confirmedAccept(): boolean {
    return this.settleMode === 'second';
  }

  /** Deliveries received and not yet handed out. */
  get buffered(): number {
    return this.queue.length;
  }

  /** @internal Settlements waiting for the broker's confirmation (tests check it drains). */
  get awaitingConfirmationCount(): number {
    return this.awaitingConfirmation.size;
  }

  /** Link credit as we granted it on the current link. */
  get linkCredit(): number {
    return this.credit.linkCredit;
  }

  // ------------------------------------------------------------------ public API

  /** Grant `n` more messages (receivers opened with `credit: 0`). */
  addCredit(n: number): void {
    this.applyFlow(this.credit.addCredit(n));
  }

  /**
   * Ask the broker to use up the credit now: it sends what it has for the credit granted, then
   * sets the credit to zero. Resolves when it answered (every message it had is in `buffered`,
   * ready for receive()); a prefetch window is then granted again. Rejects at the deadline, or
   * when the link is lost first.
   */
  drain(options?: CallOptions): Promise<void> {
    const link = this.link;
    if (link?.state !== 'attached' || this.state !== 'attached') {
      return Promise.reject(
        this.failure ?? new ClientError('quorate:illegal-state', `receiver '${this.name}' is not attached`),
      );
    }
    return this.drainWaiters.wait(options, 'drain', () => {
      link.flow(link.credit, true);
      this.host.kick();
    });
  }

  /**
   * With `max`: waits until at least one delivery is buffered, then resolves at once with every
   * buffered delivery up to `max` (in arrival order; 1..max of them, never waiting for more).
   * At the deadline with nothing buffered it rejects with the `quorate:timeout` error a single
   * receive() gives; it rejects as receive() does when the receiver fails or closes.
   */
  receive(options: ReceiveBatchOptions): Promise<Delivery<T>[]>;
  /** The next delivery (waits for one). Rejects at the deadline, or when the receiver fails. */
  receive(options?: CallOptions): Promise<Delivery<T>>;
  async receive(options?: CallOptions | ReceiveBatchOptions): Promise<Delivery<T> | Delivery<T>[]> {
    if (options !== undefined && 'max' in options && options.max !== undefined) {
      const max = checkMax(options.max);
      // buffered, nobody ahead: answered now, without a deadline (its timer) or a queued waiter
      const ready = options.signal?.aborted ? undefined : this.queue.takeUpTo(max);
      if (ready !== undefined) return ready;
      if (options.signal === undefined) {
        // a deadline alone: the queue's shared timer keeps it (no Deadline, timer or closures per call)
        const deadline = this.queue.deadline(options.timeoutMs);
        const batch = await new Promise<Delivery<T>[] | undefined>((resolve, reject) =>
          this.next({ max, resolve, reject, ...deadline }),
        );
        if (batch === undefined) throw this.closedError();
        return batch;
      }
      let waiter: BatchWaiter<Delivery<T>> | undefined;
      const batch = await waitQueued<Delivery<T>[] | undefined>(
        options,
        'receive',
        (settle) => {
          waiter = { max, resolve: settle.resolve, reject: settle.reject };
          this.next(waiter);
        },
        () => {
          if (waiter) this.queue.cancel(waiter);
        },
      );
      if (batch === undefined) throw this.closedError();
      return batch;
    }
    const ready = options?.signal?.aborted ? undefined : this.queue.shift();
    if (ready !== undefined) return ready;
    if (options?.signal === undefined) {
      const deadline = this.queue.deadline(options?.timeoutMs);
      const r = await new Promise<IteratorResult<Delivery<T>, undefined>>((resolve, reject) =>
        this.next({ resolve, reject, ...deadline }),
      );
      if (r.done) throw this.closedError();
      return r.value;
    }
    const r = await waitQueued<IteratorResult<Delivery<T>, undefined>>(
      options,
      'receive',
      (w) => this.next(w),
      (w) => this.queue.cancel(w),
    );
    if (r.done) throw this.closedError();
    return r.value;
  }

  /** Deliveries as they come; ends when the receiver closes. Breaking out of the loop does not close it. */
  [Symbol.asyncIterator](): AsyncIterator<Delivery<T>> {
    return {
      next: () => {
        // one buffered: no waiter (and its closures) needed
        const d = this.queue.shift();
        return d !== undefined
          ? Promise.resolve({ done: false, value: d })
          : new Promise<IteratorResult<Delivery<T>>>((resolve, reject) => this.next({ resolve, reject }));
      },
      return: async () => ({ done: true, value: undefined }),
    };
  }

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

  private next(w: OneWaiter<Delivery<T>> | BatchWaiter<Delivery<T>>): void {
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

  private closedError(): Error {
    return this.failure ?? new ClientError('quorate:closed', `receiver '${this.name}' closed`);
  }

  private handOut(d: Delivery<T>): Delivery<T> {
    publish(receiveChannel, () => ({
      message: d.message,
      address: this.address,
      containerId: this.containerId,
    }));
    this.dedup?.onHandedOut(d.dedupKey, d, d.dedupRow);
    this.applyFlow(this.credit.onHandedOut());
    return d;
  }

  private applyFlow(flow: CreditFlow | undefined): void {
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

/** receive()'s `max`: a positive integer. */
function checkMax(max: unknown): number {
  if (typeof max !== 'number') {
    throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', `options.max must be a number, got ${typeof max}`);
  }
  if (!Number.isInteger(max) || max < 1) {
    throw new ArgumentRangeError(`options.max must be a positive integer, got ${max}`);
  }
  return max;
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

/**
 * The link name a topic subscription is found again by: `subscription`, else `name`, else (for a
 * durable one) the topic's address; undefined: the generated name.
 */
function subscriptionName(address: string, options: ReceiverOptions): string | undefined {
  if (options.topic !== true) return undefined;
  return options.subscription ?? options.name ?? (options.durable === true ? address : undefined);
}
