/**
 * The error a send() rejects with. It lives with the client, not in src/errors.ts, because it
 * carries the client's outcome and the codec's message-id types: src/errors.ts sits below every
 * layer and imports none (docs/architecture.md#layers).
 */
import type { MessageId } from '../codec/message-id.js';
import { type AmqpErrorOptions, type ClientCondition, ClientError } from '../errors.js';
import type { RefusedOutcome } from './types.js';

/**
 * A send() that did not end with the broker accepting the message. `inDoubt`: the message was
 * written at least once and no outcome came back, so the broker may have it; false: the broker
 * surely does not hold it. `outcome`: set when the broker answered with rejected, released or
 * modified (condition 'quorate:not-accepted').
 */
export class SendError extends ClientError {
  /** The message-id of the send (the application's, or the one the client assigned). */
  readonly messageId: MessageId;
  /** True if the message was written at least once and no outcome came back, so the broker may have it. */
  readonly inDoubt: boolean;
  /** The broker's answer, when it settled the send with rejected, released or modified. */
  declare readonly outcome?: RefusedOutcome;

  constructor(
    condition: ClientCondition,
    description: string,
    messageId: MessageId,
    inDoubt: boolean,
    options: AmqpErrorOptions & { outcome?: RefusedOutcome } = {},
  ) {
    super(condition, description, options);
    this.name = 'SendError';
    this.messageId = messageId;
    this.inDoubt = inDoubt;
    if (options.outcome !== undefined) this.outcome = options.outcome;
  }
}
