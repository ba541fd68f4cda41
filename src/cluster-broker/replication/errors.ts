import { NotLeaderError, ReplicationError } from './raft/errors.js';

export { NotLeaderError, ReplicationError };

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
