/** Errors of the single-node event store. */
import { StoreError } from '../files/errors.js';

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
