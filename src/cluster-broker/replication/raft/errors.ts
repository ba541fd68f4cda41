/**
 * The errors of replication. They live with the protocol because its core refuses a proposal on a
 * follower (NotLeaderError); the drivers beside it (../errors.ts) add theirs below ReplicationError.
 */
import { AmqpError, type AmqpErrorOptions } from '../../../errors.js';

/**
 * Replication refused or lost an operation. Conditions:
 * - 'amqp:not-allowed' when proposing on a member that is not the leader (`info.leaderId`);
 * - 'amqp:connection:forced' when a proposal's outcome is unknown (leadership lost after append)
 *   or it was definitely dropped (`info.lost === true`): the broker closes the client connection
 *   and the client treats the delivery as in doubt.
 * - 'amqp:internal-error' for storage/recovery failures.
 */
export class ReplicationError extends AmqpError {
  constructor(condition: string, description: string, options: AmqpErrorOptions = {}) {
    super(condition, description, options);
    this.name = 'ReplicationError';
  }
}

export class NotLeaderError extends ReplicationError {
  readonly leaderId: string | null;
  constructor(leaderId: string | null) {
    super('amqp:not-allowed', `not the leader (leader: ${leaderId ?? 'unknown'})`, { info: { leaderId } });
    this.name = 'NotLeaderError';
    this.leaderId = leaderId;
  }
}
