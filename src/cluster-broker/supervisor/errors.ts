import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * A supervised member could not be started, stopped or controlled. Conditions:
 * 'amqp:not-found' (unknown member id), 'amqp:illegal-state' (e.g. pausing a dead member, a
 * member killed while something waited for it to be ready, a stopped supervisor),
 * 'amqp:resource-limit-exceeded' (no ready line within the deadline),
 * 'amqp:internal-error' (the process could not be spawned or exited before it was ready),
 * 'amqp:invalid-field' (bad options or CLI flags).
 */
export class SupervisorError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'SupervisorError';
  }
}
