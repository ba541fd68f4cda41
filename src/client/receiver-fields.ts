/**
 * The ground floor of the logical Receiver (receiver.ts): every field it is made of, in one place
 * so the object keeps one shape (keepShapesOf relies on it), and the constructor that reads its
 * options. Split from the application-facing API (receiver-api.ts) and the link-facing side
 * (receiver.ts) so each file has one job; a class chain, not helpers, so the per-delivery paths
 * stay plain method calls on one object.
 */
import type { Fields } from '../codec/contract.js';
import type { MessageBody } from '../codec/message.js';
import { CreditWindow, ReceiverDedup } from '../failover/index.js';
import type { ReceiverLink } from '../protocol/index.js';
import type { Delivery } from './delivery.js';
import { type LinkHost, LogicalLink, Waiters } from './link-base.js';
import { now, type PhysicalConnection } from './physical.js';
import { ReceiveQueue } from './receive-queue.js';
import type { ReceiverOptions, SettleMode } from './types.js';

export abstract class ReceiverFields<T = MessageBody> extends LogicalLink<ReceiverLink> {
  /** The receiver settle mode in force: 'second' when the broker confirms our outcomes. */
  settleMode: SettleMode = 'first';
  /** @internal link properties of the attach (the management pair's `paired`). */
  attachProperties: Fields | undefined;
  /** Messages handed out and suppressed as duplicates so far (for observability and tests). */
  duplicatesSuppressed = 0;
  protected readonly credit: CreditWindow;
  protected readonly dedup: ReceiverDedup<Delivery<T>> | undefined;
  /** Ask for rcv-settle-mode second on the next attach. */
  protected wantSecond: boolean;
  protected askedSecond = false;
  protected readonly queue = new ReceiveQueue<Delivery<T>>(this, now);
  protected readonly drainWaiters = new Waiters();
  /**
   * Settled by the application, the broker's confirmation still awaited: those fail if the
   * connection dies. Only these are tracked (a delivery not settled yet, or settled with nothing
   * to wait for, has nothing to fail): no Set entry per delivery in rcv-settle-mode first.
   */
  protected readonly awaitingConfirmation = new Set<Delivery<T>>();
  /** A kick to write settlements is queued for the end of this tick. */
  protected flushQueued = false;
  /**
   * Whether this receiver's first arrival left its twin (shape-keeper.ts). V8 holds an object's
   * hidden class only through its live objects: once none of a receive's deliveries is alive at a
   * full collection (a quiet spell, the app done with a batch), their classes die and V8 discards
   * the optimized code of the whole receive path (--trace-deopt "weak objects"), compiling it
   * again on the next burst. A twin of one arrival, holding nothing, keeps those classes.
   */
  protected shapesKept = false;

  /** For a dynamic receiver: true until the broker named its node (then `address` is set). */
  protected dynamicUnassigned: boolean;
  protected readonly selector: string | undefined;
  /** A topic subscription, and whether it is durable (docs/topics.md). */
  protected readonly subscribes: 'durable' | 'non-durable' | undefined;
  protected readonly holdUnsettled: boolean;
  /** ReceiverOptions.copyBodies: small bodies copied out of the read slab, not handed out as views */
  protected readonly copyBodies: boolean;

  /** @internal use Connection.openReceiver(). */
  constructor(
    host: LinkHost,
    /** The address (queue name) the link receives from; for a dynamic receiver, the broker's name for its node once attached. */
    public address: string,
    options: ReceiverOptions,
    name: string,
    protected readonly attachFilter?: (phys: PhysicalConnection) => boolean,
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

  /** @internal the receive queue hands each delivery to the application through this. */
  abstract handOut(d: Delivery<T>): Delivery<T>;
}

/**
 * The link name a topic subscription is found again by: `subscription`, else `name`, else (for a
 * durable one) the topic's address; undefined: the generated name.
 */
function subscriptionName(address: string, options: ReceiverOptions): string | undefined {
  if (options.topic !== true) return undefined;
  return options.subscription ?? options.name ?? (options.durable === true ? address : undefined);
}
