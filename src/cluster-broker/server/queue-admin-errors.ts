/**
 * The failures of queue administration (queue-admin.ts) and how every front end that speaks
 * HTTP status codes answers them: the AMQP management node (management-requests.ts) and the
 * HTTP API (../http/queue-changes.ts, ../http/monitoring-server.ts).
 */
import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/** Why an administration operation failed (the front ends map it to a status code). */
export type QueueAdminFailure = 'invalid' | 'not-found' | 'conflict';

const CONDITIONS: Record<QueueAdminFailure, string> = {
  invalid: 'amqp:invalid-field',
  'not-found': 'amqp:not-found',
  conflict: 'amqp:precondition-failed',
};

/** The HTTP status of each failure (RabbitMQ's: docs/management.md#the-protocol). */
const HTTP_STATUS_OF_FAILURE: Record<QueueAdminFailure, number> = {
  invalid: 400,
  'not-found': 404,
  conflict: 409,
};

/**
 * An administration request that cannot be done: a bad name or argument (`invalid`), no such
 * queue (`not-found`), or one that contradicts what exists (`conflict`: a declare with other
 * arguments, deleting a topic that still has subscriptions). A failed commit (not serving, lost
 * leadership) is the backend's own error instead.
 */
export class QueueAdminError extends AmqpError {
  constructor(
    /** What kind of failure. */
    readonly failure: QueueAdminFailure,
    description: string,
    options: AmqpErrorOptions = {},
  ) {
    super(CONDITIONS[failure], description, options);
    this.name = 'QueueAdminError';
  }
}

/**
 * The HTTP status and reason of a failed administration request: a QueueAdminError's own status;
 * 503 for a commit that failed (not serving, leader lost: its outcome may be unknown,
 * docs/management.md#the-protocol); undefined for anything else (a bug, for the caller to rethrow).
 */
export function statusOfAdminError(err: unknown): { status: number; reason: string } | undefined {
  if (err instanceof QueueAdminError)
    return { status: HTTP_STATUS_OF_FAILURE[err.failure], reason: err.description ?? '' };
  if (err instanceof AmqpError) return { status: 503, reason: err.description ?? err.condition };
  return undefined;
}
