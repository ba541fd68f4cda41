/** Turns wire error bodies into the library's error classes, by the scope that raised them. */
import { type AmqpError, ConnectionError, LinkError, SessionError } from '../errors.js';
import type { AmqpErrorBody } from './codec-port.js';

export type ErrorScope = 'connection' | 'session' | 'link';

/** An error class instance for an error body received (or sent) at `scope`. */
export function toAmqpError(scope: ErrorScope, body: AmqpErrorBody, cause?: unknown): AmqpError {
  const opts = { info: body.info as Record<string, unknown> | undefined, cause };
  const description = body.description ?? body.condition;
  // the condition's family decides the class when it names one; otherwise the scope does
  const c = body.condition;
  if (c.startsWith('amqp:link:')) return new LinkError(c, description, opts);
  if (c.startsWith('amqp:session:')) return new SessionError(c, description, opts);
  if (c.startsWith('amqp:connection:')) return new ConnectionError(c, description, opts);
  if (scope === 'link') return new LinkError(c, description, opts);
  if (scope === 'session') return new SessionError(c, description, opts);
  return new ConnectionError(c, description, opts);
}
