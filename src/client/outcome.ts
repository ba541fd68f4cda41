/**
 * How a send ends, in public terms: the broker's delivery state as an Outcome, and the
 * SendError for a send that ends without one (or with one that is not 'accepted').
 */
import type { DeliveryState } from '../codec/contract.js';
import type { MessageId } from '../codec/message-id.js';
import { ClientError } from '../errors.js';
import { SendError } from './send-error.js';
import type { Outcome } from './types.js';

/** The public outcome for a delivery state the broker sent. */
export function toOutcome(state: DeliveryState): Outcome {
  switch (state.type) {
    case 'accepted':
      return { state: 'accepted' };
    case 'released':
      return { state: 'released' };
    case 'rejected': {
      if (!state.error) return { state: 'rejected' };
      const error: { condition: string; description?: string; info?: Record<string, unknown> } = {
        condition: state.error.condition,
      };
      if (state.error.description !== undefined) error.description = state.error.description;
      if (state.error.info !== undefined) error.info = state.error.info as Record<string, unknown>;
      return { state: 'rejected', error };
    }
    case 'modified': {
      const o: Outcome = { state: 'modified' };
      if (state.deliveryFailed !== undefined) o.deliveryFailed = state.deliveryFailed;
      if (state.undeliverableHere !== undefined) o.undeliverableHere = state.undeliverableHere;
      return o;
    }
    case 'transactional-state':
      return state.outcome ? toOutcome(state.outcome) : { state: 'accepted' };
    default:
      // 'received' / 'declared' are not outcomes; a settlement carrying them means no outcome
      return { state: 'accepted' };
  }
}

/**
 * The SendError for a send that ends with `cause` and no outcome: a ClientError's condition is
 * kept (timeout, aborted, buffer-full...); any other cause (a link or connection that failed for
 * good, a transaction that ended) is 'quorate:closed'. The description is the cause's own,
 * without its condition prefix. `rolledBack`: written in a transaction that can only roll back.
 */
export function sendErrorFrom(
  cause: Error,
  messageId: MessageId,
  inDoubt: boolean,
  rolledBack = false,
): SendError {
  const condition = cause instanceof ClientError ? cause.condition : 'quorate:closed';
  const what = cause instanceof ClientError ? cause.description : cause.message;
  const where = rolledBack
    ? ' (rolled back with its transaction)'
    : inDoubt
      ? ' (in doubt: the broker may have it)'
      : ' (not sent)';
  const description = `${what}${where}`;
  return new SendError(condition, description, messageId, inDoubt, { cause });
}

/** The SendError for a send the broker settled with rejected, released or modified. */
export function refusedSendError(
  outcome: Exclude<Outcome, { state: 'accepted' }>,
  messageId: MessageId,
): SendError {
  const why =
    outcome.state === 'rejected' && outcome.error
      ? `: ${outcome.error.condition}${outcome.error.description ? ` (${outcome.error.description})` : ''}`
      : '';
  return new SendError(
    'quorate:not-accepted',
    `the broker ${outcome.state} the message${why}`,
    messageId,
    false,
    {
      outcome,
    },
  );
}
