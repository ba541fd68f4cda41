import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * A federation configuration (`--federation FILE`, docs/federation.md#configuration) cannot be
 * used: not JSON, an unknown key, a missing or malformed field, an unreadable password file, a
 * queue or topic listed twice. 'amqp:invalid-field';
 * the description names the file and the upstream.
 */
export class FederationConfigError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:invalid-field', description, options);
    this.name = 'FederationConfigError';
  }
}
