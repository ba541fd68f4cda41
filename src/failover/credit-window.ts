/**
 * Receiver credit across failover (docs/delivery-contract.md#credit).
 *
 * Two modes:
 * - prefetch (`credit` > 0, default 100): keep link credit + buffered deliveries at the window;
 *   top up (to window - buffered) once that falls below `lowWater` x window (default half).
 * - manual (`credit` 0): the application grants with addCredit(n). What it granted minus what
 *   it was handed (`remaining`) is the most the link may ever hold + buffer.
 *
 * Failover: buffered deliveries are dropped (the broker offers them again), link credit is gone
 * with the link; on re-attach the window is re-granted: prefetch -> the full window, manual ->
 * granted minus handed out. A delivery dedup suppresses (settled again or bound) refunds its
 * credit. Every method returns the flow to send, as absolute link credit, or undefined.
 *
 * Invariant (checked by property tests): linkCredit + buffered <= window (prefetch) or
 * <= remaining grant (manual).
 */
import { AmqpError } from '../errors.js';

export interface CreditWindowOptions {
  /** prefetch window; 0 = manual addCredit(). Default 100. */
  credit?: number;
  /** prefetch: top up when credit + buffered falls below this fraction of the window, default 0.5 */
  lowWater?: number;
}

/** Set link-credit to this (a flow frame; the engine adds delivery-count). */
export interface CreditFlow {
  linkCredit: number;
}

export class CreditWindow {
  readonly window: number;
  readonly lowWater: number;
  private credit = 0;
  private bufferedCount = 0;
  private remainingGrant = 0;
  private attachedNow = false;

  constructor(options: CreditWindowOptions = {}) {
    const credit = options.credit ?? 100;
    if (!Number.isInteger(credit) || credit < 0) {
      throw new AmqpError('amqp:invalid-field', `credit must be a non-negative integer, got ${credit}`);
    }
    this.window = credit;
    this.lowWater = options.lowWater ?? 0.5;
  }

  get manual(): boolean {
    return this.window === 0;
  }
  /** our view of the link credit the sender holds */
  get linkCredit(): number {
    return this.credit;
  }
  /** received, not yet handed to the application */
  get buffered(): number {
    return this.bufferedCount;
  }
  /** manual mode: granted minus handed out; prefetch: the window */
  get remaining(): number {
    return this.manual ? this.remainingGrant : this.window;
  }
  get attached(): boolean {
    return this.attachedNow;
  }

  /** The link is (re)attached: the flow that re-grants the window. */
  onAttached(): CreditFlow | undefined {
    this.attachedNow = true;
    this.credit = 0;
    return this.topUp(true);
  }

  /**
   * The connection (or link) is gone: link credit is void and buffered deliveries are dropped.
   * Returns how many buffered deliveries the client must drop.
   */
  onDetached(): { dropped: number } {
    const dropped = this.bufferedCount;
    this.attachedNow = false;
    this.credit = 0;
    this.bufferedCount = 0;
    return { dropped };
  }

  /** Manual mode: the application grants `n` more. */
  addCredit(n: number): CreditFlow | undefined {
    if (!Number.isInteger(n) || n < 0) {
      throw new AmqpError('amqp:invalid-field', `addCredit needs a non-negative integer, got ${n}`);
    }
    if (!this.manual) {
      throw new AmqpError('amqp:illegal-state', 'addCredit() is for receivers opened with credit: 0');
    }
    this.remainingGrant += n;
    return this.topUp(true);
  }

  /** A transfer arrived (it used one credit and sits in the buffer). */
  onTransfer(): CreditFlow | undefined {
    if (this.credit > 0) this.credit--;
    this.bufferedCount++;
    return undefined;
  }

  /** A buffered delivery went to the application. */
  onHandedOut(): CreditFlow | undefined {
    if (this.bufferedCount > 0) this.bufferedCount--;
    if (this.manual && this.remainingGrant > 0) this.remainingGrant--;
    return this.topUp(false);
  }

  /** Dedup suppressed a buffered delivery (settled again or bound): its credit is refunded. */
  onSuppressed(): CreditFlow | undefined {
    if (this.bufferedCount > 0) this.bufferedCount--;
    // manual: refunded at once; prefetch: the slot is free again and the batched top-up covers it
    return this.topUp(false);
  }

  /** A buffered delivery was discarded without being handed out or suppressed (e.g. receiver closing). */
  onDiscarded(): CreditFlow | undefined {
    return this.onSuppressed();
  }

  /**
   * The sender's flow told us its view of our credit (after drain, or echo). Never raises our
   * view above what we granted.
   */
  onPeerFlow(linkCredit: number): CreditFlow | undefined {
    if (linkCredit >= 0 && linkCredit < this.credit) this.credit = linkCredit;
    return this.topUp(false);
  }

  private topUp(eager: boolean): CreditFlow | undefined {
    if (!this.attachedNow) return undefined;
    const target = Math.max(0, this.remaining - this.bufferedCount);
    if (target <= this.credit) return undefined;
    if (!this.manual && !eager) {
      // prefetch: batch top-ups; wait until outstanding falls below the low-water mark
      if (this.credit + this.bufferedCount >= this.window * this.lowWater) return undefined;
    }
    this.credit = target;
    return { linkCredit: target };
  }
}
