/**
 * The logical Receiver's application-facing API (receiver.ts): credit, drain, receive() of one
 * delivery or a batch, async iteration, unsubscribe, and the getters that say what is in force.
 * Split from the fields (receiver-fields.ts) and the link-facing side (receiver.ts).
 */
import type { MessageBody } from '../codec/message.js';
import { ArgumentRangeError, ArgumentTypeError, ClientError } from '../errors.js';
import type { CreditFlow } from '../failover/index.js';
import { waitQueued } from './deadline.js';
import type { Delivery } from './delivery.js';
import type { BatchWaiter, OneWaiter } from './receive-queue.js';
import { ReceiverFields } from './receiver-fields.js';
import type { CallOptions, ReceiveBatchOptions } from './types.js';

export abstract class ReceiverApi<T = MessageBody> extends ReceiverFields<T> {
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

  protected abstract next(w: OneWaiter<Delivery<T>> | BatchWaiter<Delivery<T>>): void;
  protected abstract closedError(): Error;
  protected abstract applyFlow(flow: CreditFlow | undefined): void;
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
