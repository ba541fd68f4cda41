/**
 * What the logical Connection needs from each logical link (Sender, Receiver): attach to a
 * physical connection, take that connection's engine events, and survive its loss.
 * Every link lives on its own session, so a broker that ends a session on one link's error
 * (RabbitMQ: a refused attach, a `modified` outcome) does not take the others down.
 */
import { EventEmitter } from 'eventemitter3';
import type { AmqpErrorBody } from '../codec/contract.js';
import type { Logger } from '../common/logger.js';
import { type AmqpError, ClientError } from '../errors.js';
import { type EngineEvent, type Link, toAmqpError } from '../protocol/index.js';
import type { LinkState } from './api.js';
import { Deadline, type Settle, waitQueued } from './deadline.js';
import type { PhysicalConnection } from './physical.js';
import type { CallOptions, LinkEvents } from './types.js';

export interface ClientLink {
  readonly address: string;
  readonly name: string;
  /** False for links that only exist on some brokers (the membership feed). */
  shouldAttach(phys: PhysicalConnection): boolean;
  /** Begin a session on `phys` and attach (senders then replay their journal entries). */
  attachTo(phys: PhysicalConnection): void;
  /** An engine event for this link (routed by link/session/delivery context). */
  onEngineEvent(ev: EngineEvent): void;
  /** The physical connection is gone; the link waits for the next one. */
  onConnectionLost(error: Error): void;
  /** For good: reject everything pending, end iteration. */
  fail(error: Error): void;
}

/**
 * Conditions that mean "this link cannot exist here" (the broker closed or refused it on
 * purpose): the link fails for good instead of triggering a failover.
 */
const PERMANENT = new Set([
  'amqp:not-found',
  'amqp:unauthorized-access',
  'amqp:not-allowed',
  'amqp:not-implemented',
  'amqp:precondition-failed',
  'amqp:resource-deleted',
  'amqp:resource-locked',
  'amqp:link:stolen',
  'amqp:link:message-size-exceeded',
  'amqp:link:redirect',
]);

/** True when a detach with this error should end the logical link rather than fail over. */
export function isPermanentDetach(error: AmqpErrorBody | undefined, closed: boolean): boolean {
  if (!error) return false;
  if (PERMANENT.has(error.condition)) return true;
  return closed && error.condition === 'amqp:invalid-field';
}

export function linkError(error: AmqpErrorBody | undefined, fallback: string): AmqpError {
  return toAmqpError('link', error ?? { condition: 'amqp:link:detach-forced', description: fallback });
}

/**
 * Callers waiting for one link event (the first attach of openSender()/openReceiver(), a drain),
 * each with its own deadline.
 */
export class Waiters {
  private waiters: Settle<void>[] = [];

  /** Waits for resolveAll(); `onQueued` runs once the caller is queued (not when already past its deadline). */
  wait(options: CallOptions | undefined, what: string, onQueued?: () => void): Promise<void> {
    return waitQueued<void>(
      options,
      what,
      (w) => {
        this.waiters.push(w);
        onQueued?.();
      },
      (w) => {
        this.waiters = this.waiters.filter((x) => x !== w);
      },
    );
  }

  resolveAll(): void {
    for (const w of this.take()) w.resolve();
  }

  rejectAll(error: Error): void {
    for (const w of this.take()) w.reject(error);
  }

  private take() {
    const waiters = this.waiters;
    this.waiters = [];
    return waiters;
  }
}

/**
 * What a logical link needs from the connection that owns it: a narrow view, so that the links
 * do not import the Connection (which imports them).
 */
export interface LinkHost {
  /** Our AMQP container-id. */
  readonly containerId: string;
  readonly logger: Logger | undefined;
  /** Write pending output once the microtask queue is drained. */
  kick(): void;
  /** The current physical connection if it runs `engine` and is alive. */
  physicalFor(engine: PhysicalConnection['engine']): PhysicalConnection | undefined;
  /** The link is gone for good: stop re-attaching it. */
  unregister(link: ClientLink): void;
  /** The link was lost under a live connection: fail the connection over. */
  linkLost(link: ClientLink, error: Error): void;
}

/**
 * The life of a logical link, shared by Sender and Receiver: attach waiters, close (with its
 * deadline), loss of the connection, a detach by the broker (fail for good, or fail the
 * connection over), failing for good. Each subclass says what its own in-flight work does at
 * those moments through the protected hooks.
 */
export abstract class LogicalLink<L extends Link> extends EventEmitter<LinkEvents> implements ClientLink {
  /** The link name, kept across re-attach. */
  readonly name: string;
  /** Where the link is in its life. */
  state: LinkState = 'detached';
  /** The address the link sends to or receives from. */
  abstract readonly address: string;
  protected link: L | undefined;
  /** Set when the link failed for good. */
  protected failure: Error | undefined;
  protected readonly attachWaiters = new Waiters();
  private closeWaiter: (() => void) | undefined;

  constructor(
    protected readonly host: LinkHost,
    private readonly kind: 'sender' | 'receiver',
    name: string,
  ) {
    super();
    this.name = name;
  }

  /** `await using link = await conn.open...()`: closes the link. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Detach the link for good: a sender's pending sends reject with 'quorate:closed'; a receiver's
   * iteration ends and deliveries not yet handed out are dropped (the broker offers them again).
   */
  close(options?: CallOptions): Promise<void> {
    return this.detachForGood(this.closesTerminus, options);
  }

  /**
   * Whether close() detaches with closed=true (the broker then ends what the link held); a
   * durable subscription's receiver says false (docs/topics.md#durability).
   */
  protected get closesTerminus(): boolean {
    return true;
  }

  /** close() with the detach's `closed` flag chosen by the caller. */
  protected detachForGood(closed: boolean, options?: CallOptions): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    const link = this.link;
    const wasAttached = this.state === 'attached' && link !== undefined;
    this.state = 'closing';
    this.host.unregister(this);
    this.closing(new ClientError('quorate:closed', `${this.kind} '${this.name}' closed`));
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
      link.detach(undefined, closed);
      this.host.kick();
    });
  }

  /** @internal a promise for openSender()/openReceiver(): resolved once attached. */
  whenAttached(options?: CallOptions): Promise<void> {
    if (this.state === 'attached') return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return this.attachWaiters.wait(options, this.kind === 'sender' ? 'openSender' : 'openReceiver');
  }

  /** @internal */
  shouldAttach(_phys: PhysicalConnection): boolean {
    return this.state !== 'closing' && this.state !== 'closed' && !this.failure;
  }

  abstract attachTo(phys: PhysicalConnection): void;

  /** @internal */
  onEngineEvent(ev: EngineEvent): void {
    if (ev.type !== 'link-detached') this.onLinkEvent(ev);
    else if (ev.link === this.link) this.onDetached(ev.error, ev.closed);
  }

  /** An engine event for this link other than its detach (handled here for both kinds). */
  protected abstract onLinkEvent(ev: EngineEvent): void;

  /** @internal */
  onConnectionLost(error: Error): void {
    this.link = undefined;
    this.connectionLost(error);
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
    this.host.unregister(this);
    this.failed(error);
    this.attachWaiters.rejectAll(error);
    this.emit('detached', { error, closed: true });
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  /** The link is attached now (the broker's attach answered ours). */
  protected attached(): void {
    this.state = 'attached';
    this.attachWaiters.resolveAll();
    this.emit('attached');
  }

  /** The link was detached, by the peer or by our engine because the broker broke a link rule. */
  protected onDetached(error: AmqpErrorBody | undefined, closed: boolean): void {
    const link = this.link;
    this.link = undefined;
    link?.session.end();
    this.host.kick();
    if (this.state === 'closing') {
      this.finishClose();
      return;
    }
    const wasAttached = this.state === 'attached';
    if (!wasAttached && link !== undefined && this.retryRefusedAttach(error, link)) return;
    if (!wasAttached || isPermanentDetach(error, closed)) {
      // refused, or closed on purpose by the broker: this link cannot exist there
      this.fail(linkError(error, `attach of ${this.kind} '${this.name}' to '${this.address}' refused`));
      return;
    }
    // lost under a live connection (session crash, forced detach): fail over the connection so
    // every written delivery is in doubt and replayed in order on a fresh session
    this.lostUnderLiveConnection();
    this.state = 'detached';
    this.host.linkLost(this, linkError(error, `${this.kind} '${this.name}' detached by the broker`));
  }

  /** close() began: end the pending work with `error`. */
  protected abstract closing(error: Error): void;
  /** The physical connection is gone (the link is already forgotten). */
  protected abstract connectionLost(error: Error): void;
  /** The link failed for good with `error`. */
  protected abstract failed(error: Error): void;
  /** The broker detached a live link; the connection fails over next. */
  protected lostUnderLiveConnection(): void {}
  /** close() finished (the broker answered the detach, the deadline passed, or the connection went). */
  protected closed(): void {}
  /** A refused first attach may be retried another way: true when it was. */
  protected retryRefusedAttach(_error: AmqpErrorBody | undefined, _link: L): boolean {
    return false;
  }

  private finishClose(): void {
    this.state = 'closed';
    this.link = undefined;
    this.closed();
    const w = this.closeWaiter;
    this.closeWaiter = undefined;
    this.emit('detached', { closed: true });
    w?.();
  }
}
