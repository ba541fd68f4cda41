/** The record-size limit both stores keep: the single node's event log and a member's Raft log. */

/**
 * Upper bound on one record's payload: the reader rejects a larger length as garbage before
 * allocating, and the writer refuses to write a larger record (RecordTooLargeError), so every
 * record written is one the reader accepts (docs/production.md#record-limit).
 */
export const MAX_RECORD_BYTES = 1 << 30;
