/**
 * A consumer's outcomes as settle events carry them: the client's delivery state turned into a
 * SettleOutcome, and the key that batches equal outcomes into one settle event. Free of the link
 * (consumer-link.ts), so it has its own home.
 */
import type { DeliveryState } from '../../codec/index.js';
import type { SettleOutcome } from '../core/events.js';

/** The default outcome our sources advertise (docs/delivery-contract.md#outcomes). */
export const DEFAULT_OUTCOME: SettleOutcome = { type: 'modified', deliveryFailed: true };

/** Shared outcomes without fields: one object for every delivery settled with them (never mutated). */
const ACCEPTED: SettleOutcome = Object.freeze({ type: 'accepted' });
const RELEASED: SettleOutcome = Object.freeze({ type: 'released' });

export function toOutcome(state: DeliveryState | undefined): SettleOutcome {
  switch (state?.type) {
    case 'accepted':
      return ACCEPTED;
    case 'rejected': {
      const e = state.error;
      if (!e) return { type: 'rejected' };
      return {
        type: 'rejected',
        error:
          e.description === undefined
            ? { condition: e.condition }
            : { condition: e.condition, description: e.description },
      };
    }
    case 'released':
      return RELEASED;
    case 'modified': {
      // undeliverable-here is applied by the queue (core/broker-state.ts): never again to this
      // link, or dead-lettered at once on a queue with a delivery limit
      return {
        type: 'modified',
        ...(state.deliveryFailed ? { deliveryFailed: true } : {}),
        ...(state.undeliverableHere ? { undeliverableHere: true } : {}),
      };
    }
    default:
      // settled with no outcome: the source's default outcome applies
      return DEFAULT_OUTCOME;
  }
}

export function outcomeKey(o: SettleOutcome): string {
  switch (o.type) {
    case 'rejected':
      return o.error ? `rejected:${o.error.condition}:${o.error.description ?? ''}` : 'rejected';
    case 'modified':
      return `modified:${o.deliveryFailed ? 1 : 0}${o.undeliverableHere ? 1 : 0}`;
    default:
      return o.type;
  }
}
