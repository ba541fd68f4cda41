/**
 * Error classes of quorate. Every error carries the AMQP error `condition` (a symbol such as
 * 'amqp:decode-error'), a human `description`, optional `info` and the standard `cause`.
 * One subclass per condition family; other layers append their own subclasses below.
 */

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
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'ConnectionError';
  }
}

/** Session-scope failures: 'amqp:session:*' conditions and session ends with an error (protocol engine). */
export class SessionError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'SessionError';
  }
}

/** Link-scope failures: 'amqp:link:*' conditions and detaches with an error (protocol engine). */
export class LinkError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'LinkError';
  }
}

/**
 * Client-side failures of an operation (client layer): 'quorate:timeout' (its deadline passed),
 * 'quorate:aborted' (its AbortSignal fired), 'quorate:closed' (the connection or link was closed),
 * 'quorate:reconnect-exhausted' (failover gave up), 'quorate:buffer-full' (send buffer at its bound
 * with onFull 'reject'), 'quorate:in-doubt' (an outcome whose confirmation was lost with the connection).
 */
export class ClientError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'ClientError';
  }
}

/**
 * A send() that ends without the broker's outcome. `inDoubt`: the message was written at least
 * once, so the broker may have it; false: it surely never left the client.
 */
export class SendError extends ClientError {
  /** The message-id of the send (the application's, or the one the client assigned). */
  readonly messageId: import('./codec/message.js').MessageId;
  /** True if the message was written at least once, so the broker may have it. */
  readonly inDoubt: boolean;

  constructor(
    condition: string,
    description: string,
    messageId: import('./codec/message.js').MessageId,
    inDoubt: boolean,
    options: AmqpErrorOptions = {},
  ) {
    super(condition, description, options);
    this.name = 'SendError';
    this.messageId = messageId;
    this.inDoubt = inDoubt;
  }
}
