import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/** A malformed JMS selector: the attach carrying it is refused with amqp:invalid-field and this description. */
export class SelectorError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:invalid-field', `invalid selector: ${description}`, options);
    this.name = 'SelectorError';
  }
}
