/**
 * The log format's record limit, enforced on write: an event whose record would be larger than
 * MAX_RECORD_BYTES is refused (RecordTooLargeError) before anything is written or applied, since
 * a reader would take such a record for garbage (docs/production.md#record-limit).
 */
import type { BrokerEvent } from '../core/events.js';
import { RecordTooLargeError } from '../files/errors.js';
import { MAX_RECORD_BYTES } from '../files/record-bytes.js';

/**
 * The largest max-message-size a broker may declare: one message's enqueue record must fit, with
 * room for the event's other fields (queue name, dedup key, times: each bounded by the frame size,
 * far below this room). The write-time check stays the last word.
 */
export const MAX_STORABLE_MESSAGE_SIZE = MAX_RECORD_BYTES - 1024 * 1024;

/**
 * Bytes the record of `e` holds at least (its message bodies), known without encoding it: an
 * event refused on this is refused before a buffer of its size is asked for.
 */
export function recordBytesAtLeast(e: BrokerEvent): number {
  if (e.type === 'enqueue') return e.message.length;
  if (e.type === 'commit') {
    let n = 0;
    for (const sub of e.events) n += recordBytesAtLeast(sub);
    return n;
  }
  return 0;
}

/** Throws RecordTooLargeError when a record of `bytes` payload bytes is past the format's limit. */
export function assertRecordFits(bytes: number, max = MAX_RECORD_BYTES): void {
  if (bytes > max) throw new RecordTooLargeError(bytes, max);
}
