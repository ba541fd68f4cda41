import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * A member's configuration cannot be right: duplicate ids or addresses in its peer list, a
 * cluster port that disagrees with its own entry, or a peer list / cluster id that differs from
 * what its data dir recorded on first start. 'amqp:invalid-field'. `node` exits 2 on it.
 */
export class MemberConfigError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:invalid-field', description, options);
    this.name = 'MemberConfigError';
  }
}
