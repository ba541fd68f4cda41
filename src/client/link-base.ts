/**
 * What the logical Connection needs from each logical link (Sender, Receiver): attach to a
 * physical connection, take that connection's engine events, and survive its loss.
 * Every link lives on its own session, so a broker that ends a session on one link's error
 * (RabbitMQ: a refused attach, a `modified` outcome) does not take the others down.
 */
import type { AmqpErrorBody } from '../codec/contract.js';
import type { AmqpError } from '../errors.js';
import { type EngineEvent, toAmqpError } from '../protocol/index.js';
import { Deadline } from './deadline.js';
import type { PhysicalConnection } from './transport.js';
import type { CallOptions } from './types.js';

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
  private waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];

  /** Waits for resolveAll(); `onQueued` runs once the caller is queued (not when already past its deadline). */
  wait(options: CallOptions | undefined, what: string, onQueued?: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const w = {
        resolve: () => {
          deadline.clear();
          resolve();
        },
        reject: (e: Error) => {
          deadline.clear();
          reject(e);
        },
      };
      const deadline = new Deadline(
        options,
        (_r, error) => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(error);
        },
        what,
      );
      if (deadline.expired) return;
      this.waiters.push(w);
      onQueued?.();
    });
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
