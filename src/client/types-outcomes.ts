/**
 * Public types of outcomes: the broker's verdict on a send (SendResult, Outcome, RefusedOutcome)
 * and what an application gives a delivery (SettleOutcome, ModifyOptions). Re-exported by types.ts.
 */
import type { MessageId } from '../codec/public.js';

/** An AMQP error as carried in a rejected outcome. */
export interface OutcomeError {
  /** The AMQP error condition symbol, e.g. `amqp:resource-limit-exceeded`. */
  condition: string;
  /** The broker's human-readable description. */
  description?: string;
  /** Extra fields the broker attached. */
  info?: Record<string, unknown>;
}

/** The broker's verdict on a delivery (docs/delivery-contract.md#outcomes). */
export type Outcome =
  | {
      /** The broker took the message (for a send: committed, docs/delivery-contract.md#commit-point). */
      state: 'accepted';
    }
  | RefusedOutcome;

/** An outcome other than accepted: what a SendError's `outcome` holds. */
export type RefusedOutcome =
  | {
      /** The broker refused the message; `error` says why. */
      state: 'rejected';
      /** The reason the broker gave. */
      error?: OutcomeError;
    }
  | {
      /** The broker did not process the message; it may be sent again. */
      state: 'released';
    }
  | {
      /** Like released, with changes to the delivery annotations. */
      state: 'modified';
      /** The delivery counts as a failed attempt (delivery-count + 1). */
      deliveryFailed?: boolean;
      /** Do not offer the message to this link again. */
      undeliverableHere?: boolean;
    };

/**
 * What a resolved {@link Sender.send} means: the broker accepted the message. Any other outcome
 * (rejected, released, modified) rejects send() with a SendError whose `outcome` says which.
 */
export interface SendResult {
  /** Always 'accepted': other outcomes reject. */
  state: 'accepted';
  /** The message-id the message was sent with (the application's, or the one assigned). */
  messageId: MessageId;
  /** True if this delivery was written more than once (replayed after a failover). */
  resent: boolean;
}

/** The outcome an application gives a delivery (accept, reject, release, modify). */
export type SettleOutcome = 'accepted' | 'rejected' | 'released' | 'modified';

/** Options of {@link Delivery.modify}. */
export interface ModifyOptions {
  /** Count this as a failed delivery attempt (delivery-count + 1). */
  deliveryFailed?: boolean;
  /** Do not offer the message to this receiver's link again. */
  undeliverableHere?: boolean;
}
