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

/**
 * One event's record would be larger than the log format allows (MAX_RECORD_BYTES): it was
 * refused before anything was written or applied, and the store goes on (only that event's
 * publisher is told, 'amqp:link:message-size-exceeded'). A reader would call such a record
 * corrupt, so it is never written (docs/production.md#record-limit).
 */
export class RecordTooLargeError extends AmqpError {
  /** Payload bytes the record would hold (at least). */
  readonly recordBytes: number;
  /** The format's limit. */
  readonly maxRecordBytes: number;

  constructor(recordBytes: number, maxRecordBytes: number) {
    super(
      'amqp:link:message-size-exceeded',
      `an event of ${recordBytes} bytes is larger than one store record may be (${maxRecordBytes})`,
      { info: { recordBytes, maxRecordBytes } },
    );
    this.name = 'RecordTooLargeError';
    this.recordBytes = recordBytes;
    this.maxRecordBytes = maxRecordBytes;
  }
}
