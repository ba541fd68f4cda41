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

/**
 * A link was handed a delivery that did not come from the quorate client's receiver, so the bytes
 * it arrived as are unknown (upstream-client.ts encodedMessage). A bug, never the wire's doing:
 * 'amqp:internal-error'; the move fails and the message stays upstream.
 */
export class ForeignDeliveryError extends AmqpError {
  constructor() {
    super(
      'amqp:internal-error',
      'federation: a delivery not made by the quorate client has no encoded message',
    );
    this.name = 'ForeignDeliveryError';
  }
}
