/**
 * A message handed to the application, with its settlement methods. Each returns a Promise:
 * in rcv-settle-mode second it resolves once the broker settled our outcome (the removal is
 * committed); in first, once the disposition is on its way. A redelivery of the same message-id
 * that arrived meanwhile (failover) is bound to this Delivery and settled with it.
 */
import type { AmqpErrorBody, DeliveryState, Fields } from '../codec/contract.js';
import type { MessageBody } from '../codec/message.js';
import { ClientError } from '../errors.js';
import { ACCEPTED, type IncomingDelivery, REJECTED, RELEASED } from '../protocol/index.js';
import type { Delivery as PublicDelivery, ReceivedMessage } from './api.js';
import { Deadline } from './deadline.js';
import { settleChannel } from './diagnostics.js';
import { checkTransaction, type Transaction } from './transaction.js';
import type { ModifyOptions, OutcomeError, SettleOptions, SettleOutcome } from './types.js';

/** What a Delivery needs from its Receiver. */
export interface DeliveryOwner {
  /** The receiver's source address and its connection's container-id (for diagnostics). */
  readonly address: string;
  readonly containerId: string;
  /** The transfer can still be settled (its link is the receiver's current, attached link). */
  isLive(transfer: IncomingDelivery): boolean;
  /** True when the broker confirms settlement (rcv-settle-mode second in force). */
  readonly confirmsSettlement: boolean;
  onSettled(delivery: Delivery<unknown>, state: DeliveryState): void;
  /** A settlement now waits for the broker's confirmation: track it until onFinished. */
  onAwaiting(delivery: Delivery<unknown>): void;
  /** The awaited confirmation is done (resolved or rejected): stop tracking the delivery. */
  onFinished(delivery: Delivery<unknown>): void;
  /** Write the queued settlements: at the end of this tick, or `now`. */
  flush(now?: boolean): void;
}

/** Marks a settlement's promise handled (one function for all of them). */
const ignoreRejection = (): undefined => undefined;

/** A settlement with nothing left to wait for; shared, so such a settlement allocates no promise. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * A settlement waiting for the broker to settle its transfers (rcv-settle-mode second): nearly
 * always one transfer, kept as it is; a Set only when redeliveries were bound to it.
 */
type Pending = IncomingDelivery | Set<IncomingDelivery>;

interface Confirmation {
  pending: Pending;
  resolve(): void;
  reject(e: Error): void;
}

/**
 * One message handed to the application by a {@link Receiver}; settle it once with accept,
 * release, reject or modify. `Delivery<T>`: `message.body` is typed `T` as a type-level promise
 * (openReceiver<T>()); the decoder does not check it.
 */
export class Delivery<T = MessageBody> implements PublicDelivery<T> {
  /** The outcome the application chose, once it settled (with `tx`: a transactional-state wrapping it). */
  outcome: DeliveryState | undefined = undefined;
  /** The transfer this message arrived on, until settled. */
  private transfer: IncomingDelivery | undefined;
  /**
   * Redeliveries bound to it while unsettled (failover only): an array only then, none per
   * delivery (with the transfer above it saves an array and its backing store per message).
   */
  private bound: IncomingDelivery[] | undefined = undefined;
  /** @internal its key in its receiver's dedup window (undefined: no dedup). */
  dedupKey: string | undefined = undefined;
  /** @internal its row in that window (ReceiverDedup.admit), checked against the key on use. */
  dedupRow = -1;
  private confirmation: Confirmation | undefined;

  /** @internal */
  constructor(
    private readonly owner: DeliveryOwner,
    transfer: IncomingDelivery,
    /** The message, decoded (a message without a body section has `body` undefined). */
    readonly message: ReceivedMessage<T>,
  ) {
    this.transfer = transfer;
  }

  /**
   * @internal the transfer this message arrived on and redeliveries bound to it (none once
   * settled); a fresh array per call, for the rare readers (federation, a transactional settle).
   */
  get transfers(): readonly IncomingDelivery[] {
    if (this.transfer === undefined) return [];
    return this.bound === undefined ? [this.transfer] : [this.transfer, ...this.bound];
  }

  /** True once the application settled it. */
  get settled(): boolean {
    return this.outcome !== undefined;
  }

  /** The broker's delivery-count header for this delivery (0 when absent). */
  get deliveryCount(): number {
    return this.message.deliveryCount ?? 0;
  }

  /** The message is done: the broker removes it (confirmed in rcv-settle-mode second). */
  accept(options?: SettleOptions): Promise<void> {
    return this.settle(ACCEPTED, options);
  }

  /** Give it back unchanged: available again, delivery-count unchanged. */
  release(options?: SettleOptions): Promise<void> {
    return this.settle(RELEASED, options);
  }

  /** Invalid message: the broker dead-letters it (or drops it). */
  reject(error?: OutcomeError, options?: SettleOptions): Promise<void> {
    if (!error) return this.settle(REJECTED, options);
    const body: AmqpErrorBody = { condition: error.condition };
    if (error.description !== undefined) body.description = error.description;
    if (error.info !== undefined) body.info = error.info as Fields;
    return this.settle({ type: 'rejected', error: body }, options);
  }

  /** Give it back modified: `deliveryFailed` counts a failed attempt, `undeliverableHere` keeps it from this link. */
  modify(options: ModifyOptions & SettleOptions = {}): Promise<void> {
    const state: DeliveryState = { type: 'modified' };
    if (options.deliveryFailed !== undefined) state.deliveryFailed = options.deliveryFailed;
    if (options.undeliverableHere !== undefined) state.undeliverableHere = options.undeliverableHere;
    return this.settle(state, options);
  }

  /** @internal a redelivery of this message-id arrived while this one is unsettled (or settled). */
  bind(transfer: IncomingDelivery): void {
    if (this.outcome) {
      this.apply(transfer, this.outcome);
      this.owner.flush();
      return;
    }
    if (this.bound === undefined) this.bound = [transfer];
    else this.bound.push(transfer);
  }

  /** @internal the broker settled one of our transfers. */
  onRemoteSettled(transfer: IncomingDelivery): void {
    const c = this.confirmation;
    if (c === undefined) return;
    if (c.pending instanceof Set) {
      if (!c.pending.delete(transfer) || c.pending.size > 0) return;
    } else if (c.pending !== transfer) {
      return;
    }
    this.confirmation = undefined;
    c.resolve();
  }

  /**
   * @internal the link or connection is gone (lost, or the receiver closed): an unconfirmed
   * settlement is in doubt and its promise rejects, never waits forever.
   */
  onConnectionLost(why = 'connection lost'): void {
    const c = this.confirmation;
    if (!c) return;
    this.confirmation = undefined;
    c.reject(
      new ClientError(
        'quorate:in-doubt',
        `${why} before the broker confirmed the outcome (the message may be offered again)`,
      ),
    );
  }

  /**
   * Every settlement promise is marked handled: an accept() nobody awaits (a `for await` loop
   * that calls `d.accept()` and moves on) never kills the process with an unhandled rejection
   * when the connection closes under it; a caller that awaits still sees the rejection.
   */
  private settle(state: DeliveryState, options: SettleOptions | undefined): Promise<void> {
    const p = settleChannel.hasSubscribers
      ? settleChannel.tracePromise(() => this.settleTimed(state, options), {
          message: this.message,
          address: this.owner.address,
          outcome: state.type as SettleOutcome,
          containerId: this.owner.containerId,
        })
      : this.settleTimed(state, options);
    if (p !== SETTLED) p.catch(ignoreRejection);
    return p;
  }

  private settleTimed(state: DeliveryState, options: SettleOptions | undefined): Promise<void> {
    if (this.outcome) {
      return Promise.reject(
        new ClientError('quorate:illegal-state', `delivery already settled (${this.outcome.type})`),
      );
    }
    let done: Promise<void>;
    try {
      const tx = checkTransaction(options?.tx);
      done = tx ? this.settleInTransaction(state, tx) : this.settleNow(state);
    } catch (e) {
      return Promise.reject(e);
    }
    // nothing to wait for (rcv-settle-mode first): no promise chain per delivery, nothing tracked
    if (done === SETTLED) return SETTLED;
    if (options?.timeoutMs === undefined && options?.signal === undefined) {
      // a confirmation awaited tells the owner itself when it is done (no chain of promises on
      // it); anything else (refused, or its link gone) was never tracked
      return done;
    }
    // the outcome is sent either way; the deadline only bounds the wait for the confirmation
    return new Promise<void>((resolve, reject) => {
      const deadline = new Deadline(
        options,
        (_r, error) => {
          this.confirmation = undefined;
          reject(error);
        },
        state.type,
      );
      done.then(
        () => {
          deadline.clear();
          resolve();
        },
        (e: unknown) => {
          deadline.clear();
          reject(e);
        },
      );
    }).finally(() => this.owner.onFinished(this));
  }

  private settleNow(state: DeliveryState): Promise<void> {
    if (this.outcome) {
      return Promise.reject(
        new ClientError('quorate:illegal-state', `delivery already settled (${this.outcome.type})`),
      );
    }
    this.outcome = state;
    this.owner.onSettled(this, state);
    // nearly every message has one transfer: it alone, no array per settlement
    const first = this.transfer;
    let live = 0;
    let pending: Pending | undefined;
    if (first !== undefined && this.owner.isLive(first)) {
      live++;
      pending = this.settleTransfer(first, state, pending);
    }
    if (this.bound !== undefined) {
      for (const t of this.bound) {
        if (!this.owner.isLive(t)) continue;
        live++;
        pending = this.settleTransfer(t, state, pending);
      }
    }
    this.transfer = undefined;
    this.bound = undefined;
    if (live === 0) {
      // the link it came on is gone: the broker already put it back. For release/modify that is
      // what was asked; accept/reject are in doubt (dedup settles the redelivery with this outcome)
      if (state.type !== 'accepted' && state.type !== 'rejected') return Promise.resolve();
      return Promise.reject(
        new ClientError(
          'quorate:in-doubt',
          `${state.type} not confirmed: the connection the message came on is gone (a redelivery will be settled ${state.type})`,
        ),
      );
    }
    this.owner.flush();
    if (pending === undefined) return SETTLED;
    const waiting = pending;
    this.owner.onAwaiting(this);
    return new Promise<void>((resolve, reject) => {
      this.confirmation = {
        pending: waiting,
        resolve: () => {
          this.owner.onFinished(this);
          resolve();
        },
        reject: (e) => {
          this.owner.onFinished(this);
          reject(e);
        },
      };
    });
  }

  /**
   * The outcome goes out wrapped in the transaction's state and takes effect at its commit: the
   * broker settles (rcv-settle-mode second) only then, so this does not wait for a
   * confirmation. Dedup remembers the outcome only once committed: after a rollback the
   * broker's redelivery must be handed out again.
   */
  private settleInTransaction(state: DeliveryState, tx: Transaction): Promise<void> {
    const live = this.transfers.filter((t) => this.owner.isLive(t));
    const refused =
      tx.refusal(live[0]?.link.session.conn) ??
      (live.length === 0
        ? new ClientError(
            'quorate:illegal-state',
            'the connection the message came on is gone: it cannot join the transaction (the broker offers it again)',
          )
        : undefined);
    if (refused) return Promise.reject(refused);
    const wrapped = tx.wrap(state);
    this.outcome = wrapped;
    this.owner.onSettled(this, wrapped);
    tx.afterCommit(() => this.owner.onSettled(this, state));
    this.transfer = undefined;
    this.bound = undefined;
    for (const t of live) this.apply(t, wrapped);
    // written now, not at the end of the tick: the discharge that commits it must follow it
    this.owner.flush(true);
    return SETTLED;
  }

  /** Settles one live transfer; adds it to `pending` when its settlement is to be confirmed. */
  private settleTransfer(
    t: IncomingDelivery,
    state: DeliveryState,
    pending: Pending | undefined,
  ): Pending | undefined {
    this.apply(t, state);
    if (!this.owner.confirmsSettlement || t.remoteSettled) return pending;
    if (pending === undefined) return t;
    if (pending instanceof Set) return pending.add(t);
    return new Set([pending, t]);
  }

  private apply(t: IncomingDelivery, state: DeliveryState): void {
    if (t.settled || !this.owner.isLive(t)) return;
    // explicit: the mode in force may differ from the one we asked for in our attach
    t.disposition(state, !this.owner.confirmsSettlement);
  }
}
