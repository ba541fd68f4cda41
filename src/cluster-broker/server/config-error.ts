import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * A broker configuration input is unusable: a users file line, a permissions file, a limit.
 * Condition 'amqp:invalid-field'; the description names the file (and line) and how to fix it.
 */
export class BrokerConfigError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:invalid-field', description, options);
    this.name = 'BrokerConfigError';
  }
}
