/**
 * Error classes of quorate. Every error carries the AMQP error `condition` (a symbol such as
 * 'amqp:decode-error'), a human `description`, optional `info` and the standard `cause`.
 * One subclass per condition family; other layers append their own subclasses below.
 */

/**
 * The AMQP 1.0 error conditions (spec part 2, 2.8.15-2.8.18). A peer may send any symbol, so the
 * classes that carry a peer's condition accept other strings too (`(string & {})` keeps editor
 * completion for the standard ones).
 */
export type AmqpStandardCondition =
  | 'amqp:internal-error'
  | 'amqp:not-found'
  | 'amqp:unauthorized-access'
  | 'amqp:decode-error'
  | 'amqp:resource-limit-exceeded'
  | 'amqp:not-allowed'
  | 'amqp:invalid-field'
  | 'amqp:not-implemented'
  | 'amqp:resource-locked'
  | 'amqp:precondition-failed'
  | 'amqp:resource-deleted'
  | 'amqp:illegal-state'
  | 'amqp:frame-size-too-small';

/** Conditions of a ConnectionError (a peer may send others). */
export type ConnectionCondition =
  | AmqpStandardCondition
  | 'amqp:connection:forced'
  | 'amqp:connection:framing-error'
  | 'amqp:connection:redirect'
  | (string & {});

/** Conditions of a SessionError (a peer may send others). */
export type SessionCondition =
  | AmqpStandardCondition
  | 'amqp:session:window-violation'
  | 'amqp:session:errant-link'
  | 'amqp:session:handle-in-use'
  | 'amqp:session:unattached-handle'
  | (string & {});

/** Conditions of a LinkError (a peer may send others). */
export type LinkCondition =
  | AmqpStandardCondition
  | 'amqp:link:detach-forced'
  | 'amqp:link:transfer-limit-exceeded'
  | 'amqp:link:message-size-exceeded'
  | 'amqp:link:redirect'
  | 'amqp:link:stolen'
  | (string & {});

/**
 * The client's own conditions (ClientError, SendError): exactly these, nothing else.
 * - 'quorate:timeout': the call's deadline passed.
 * - 'quorate:aborted': its AbortSignal fired.
 * - 'quorate:closed': the connection or link was closed (by the application, or failed for good).
 * - 'quorate:connect-failed': a connection attempt failed (the socket, DNS, TLS, SASL, or a peer
 *   that is not AMQP); `cause` holds the underlying error.
 * - 'quorate:connection-lost': the socket failed or closed under an open connection (no AMQP
 *   Close); `cause` holds the socket error, if there was one.
 * - 'quorate:unresponsive': the member sent nothing while it owed answers (acknowledgements,
 *   deliveries) for longer than it recently took, and did not answer a probe either
 *   (docs/failover.md#unresponsive); failover moves on.
 * - 'quorate:reconnect-exhausted': every attempt failed within the reconnect limits.
 * - 'quorate:buffer-full': the send buffer is at its bound with onFull 'reject'.
 * - 'quorate:in-doubt': an outcome whose confirmation was lost with the connection.
 * - 'quorate:not-accepted': the broker settled a send with rejected, released or modified
 *   (SendError.outcome says which).
 * - 'quorate:message-too-large': larger than the broker's max-message-size.
 * - 'quorate:illegal-state': the call does not fit the object's state (e.g. a delivery settled twice).
 */
export type ClientCondition =
  | 'quorate:timeout'
  | 'quorate:aborted'
  | 'quorate:closed'
  | 'quorate:connect-failed'
  | 'quorate:connection-lost'
  | 'quorate:unresponsive'
  | 'quorate:reconnect-exhausted'
  | 'quorate:buffer-full'
  | 'quorate:in-doubt'
  | 'quorate:not-accepted'
  | 'quorate:message-too-large'
  | 'quorate:illegal-state';

/** Optional parts of an {@link AmqpError}. */
export interface AmqpErrorOptions {
  /** Extra fields, as in an AMQP error's `info` map. */
  info?: Record<string, unknown>;
  /** The error that led to this one (the standard `Error.cause`). */
  cause?: unknown;
}

/** The base of every quorate error: an AMQP error condition with its description. */
export class AmqpError extends Error {
  /** The AMQP error condition symbol, e.g. `amqp:not-found` or `quorate:timeout`. */
  readonly condition: string;
  /** What happened, in words (the message without the condition prefix). */
  readonly description: string;
  /** Extra fields, as in an AMQP error's `info` map. */
  declare readonly info?: Record<string, unknown>;

  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(`${condition}: ${description}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AmqpError';
    this.condition = condition;
    this.description = description;
    if (options.info !== undefined) this.info = options.info;
  }
}

/**
 * Bytes that cannot be decoded: 'amqp:decode-error' (a malformed value),
 * 'amqp:connection:framing-error' (a malformed or oversized frame),
 * 'amqp:frame-size-too-small' and similar codec conditions.
 */
export class AmqpDecodeError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'AmqpDecodeError';
  }
}

/** A value that cannot be encoded as asked (out of range, missing mandatory field): 'amqp:invalid-field'. */
export class AmqpEncodeError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:invalid-field', description, options);
    this.name = 'AmqpEncodeError';
  }
}

/** Connection-scope failures: 'amqp:connection:*' conditions and connection-level closes (protocol engine). */
export class ConnectionError extends AmqpError {
  declare readonly condition: ConnectionCondition;
  constructor(condition: ConnectionCondition, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'ConnectionError';
  }
}

/** Session-scope failures: 'amqp:session:*' conditions and session ends with an error (protocol engine). */
export class SessionError extends AmqpError {
  declare readonly condition: SessionCondition;
  constructor(condition: SessionCondition, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'SessionError';
  }
}

/** Link-scope failures: 'amqp:link:*' conditions and detaches with an error (protocol engine). */
export class LinkError extends AmqpError {
  declare readonly condition: LinkCondition;
  constructor(condition: LinkCondition, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'LinkError';
  }
}

/**
 * Conditions of a TransactionError: the transaction errors of AMQP 1.0 part 4 (a peer may send
 * others). 'amqp:transaction:rollback': it was rolled back instead of committed.
 */
export type TransactionCondition =
  | 'amqp:transaction:unknown-id'
  | 'amqp:transaction:rollback'
  | 'amqp:transaction:timeout'
  | (string & {});

/**
 * A transaction that did not commit: the broker refused the declare or the commit, or the
 * connection was lost while it was open (nothing of it took effect). A commit whose answer was
 * lost with the connection is not this error but a ClientError 'quorate:in-doubt'.
 */
export class TransactionError extends AmqpError {
  declare readonly condition: TransactionCondition;
  constructor(condition: TransactionCondition, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'TransactionError';
  }
}

/** Client-side failures of an operation (client layer); the conditions are listed at ClientCondition. */
export class ClientError extends AmqpError {
  declare readonly condition: ClientCondition;
  constructor(condition: ClientCondition, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'ClientError';
  }
}

/**
 * A management request (`conn.management()`, docs/client.md#management) answered with a status
 * code other than success: `status` is that code (RabbitMQ's HTTP-over-AMQP status: 400 bad
 * request, 403 no grant, 404 no such queue, 409 a declare that contradicts the queue, 503 the
 * broker could not commit) and `description` the broker's text. `condition` is the nearest AMQP
 * condition (`amqp:not-found` for 404, `amqp:precondition-failed` for 409,
 * `amqp:unauthorized-access` for 401/403, `amqp:invalid-field` for 400, else
 * `amqp:internal-error`).
 */
export class ManagementError extends AmqpError {
  constructor(
    /** The reply's status code. */
    readonly status: number,
    description: string,
    options: AmqpErrorOptions = {},
  ) {
    super(conditionOfStatus(status), description, options);
    this.name = 'ManagementError';
  }
}

function conditionOfStatus(status: number): AmqpStandardCondition {
  if (status === 404) return 'amqp:not-found';
  if (status === 409) return 'amqp:precondition-failed';
  if (status === 401 || status === 403) return 'amqp:unauthorized-access';
  if (status === 400) return 'amqp:invalid-field';
  return 'amqp:internal-error';
}

/** Node's codes for argument mistakes, carried by the TypeError / RangeError the client throws. */
export type ArgumentErrorCode =
  | 'ERR_INVALID_ARG_TYPE'
  | 'ERR_INVALID_ARG_VALUE'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_INVALID_URL';

/** A TypeError with a `code`, for a missing or ill-typed argument or option. */
export class ArgumentTypeError extends TypeError {
  /** Node's code for the mistake. */
  readonly code: ArgumentErrorCode;
  constructor(code: ArgumentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TypeError';
    this.code = code;
  }
}

/** A RangeError with a `code`, for a number outside what an option allows. */
export class ArgumentRangeError extends RangeError {
  /** Always 'ERR_OUT_OF_RANGE'. */
  readonly code: ArgumentErrorCode;
  constructor(message: string) {
    super(message);
    this.name = 'RangeError';
    this.code = 'ERR_OUT_OF_RANGE';
  }
}
