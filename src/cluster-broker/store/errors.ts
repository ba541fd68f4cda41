/** Errors of the single-node event store. */
import { AmqpError } from '../../errors.js';

import { StoreError } from '../files/errors.js';

export { StoreError };

/**
 * Damage found on open that is not a torn tail (a crash mid-write): a bad record followed by
 * valid ones, a bad segment header, a gap in the log, an unreadable snapshot. Names the file and
 * the byte offset where the damage starts. Nothing was changed on disk when this is thrown;
 * `openStore(dir, { repair: true })` sets the damaged files aside instead.
 */
export class StoreCorruptionError extends StoreError {
  /** Absolute path of the damaged file. */
  readonly file: string;
  /** Byte offset in `file` where the damage starts. */
  readonly offset: number;
  /** What is wrong there, without the file and offset. */
  readonly reason: string;

  constructor(file: string, offset: number, reason: string) {
    super(`${file} is damaged at byte ${offset}: ${reason}`, { info: { file, offset } });
    this.name = 'StoreCorruptionError';
    this.file = file;
    this.offset = offset;
    this.reason = reason;
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
