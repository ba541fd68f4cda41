/**
 * The errors of replication's drivers. The protocol in raft/ throws none of these: a driver asks
 * the core whether it leads before proposing, and refuses a proposal on a follower with
 * NotLeaderError.
 */
import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

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

/** The fate of a proposal cannot be known here any more (`lost`: it certainly did not commit). */
export class ProposalOutcomeError extends ReplicationError {
  readonly index: number;
  readonly term: number;
  readonly lost: boolean;
  constructor(index: number, term: number, lost: boolean, reason: string) {
    super(
      'amqp:connection:forced',
      `proposal ${index}@${term} ${lost ? 'lost' : 'outcome unknown'}: ${reason}`,
      {
        info: { index, term, lost },
      },
    );
    this.name = 'ProposalOutcomeError';
    this.index = index;
    this.term = term;
    this.lost = lost;
  }
}
