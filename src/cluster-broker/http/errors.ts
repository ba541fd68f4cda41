import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * The monitoring side failed: 'amqp:internal-error' (its files are missing), 'amqp:invalid-field'
 * (a bad flag or URL), 'amqp:not-found' (a member's endpoint answered with an error or not at all:
 * `quorate-broker status`).
 */
export class MonitoringError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions & { condition?: string } = {}) {
    super(options.condition ?? 'amqp:internal-error', description, options);
    this.name = 'MonitoringError';
  }
}
