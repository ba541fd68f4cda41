import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * A misuse of the fault-injection proxies: 'amqp:not-found' for an unknown member or link,
 * 'amqp:invalid-field' for a malformed partition or ring.
 */
export class NetProxyError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'NetProxyError';
  }
}
