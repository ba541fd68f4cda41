/** Errors of the file helpers both stores share (the single node's event store and the Raft log). */
import { AmqpError, type AmqpErrorOptions } from '../../errors.js';

/**
 * The store cannot be trusted: corruption before the log's tail, a missing segment, an fsync that
 * failed. 'amqp:internal-error'. After a write or fsync failure the store refuses further
 * commits: the broker must stop (its in-memory state may be ahead of the disk).
 */
export class StoreError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:internal-error', description, options);
    this.name = 'StoreError';
  }
}
