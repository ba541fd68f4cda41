/**
 * Telling a torn tail from corruption, for the records of one log segment.
 *
 * A torn tail is what a crash in the middle of an append leaves: the bytes of the last write
 * stop part-way, and nothing after them was ever written. Those records were never fsynced, so
 * no publisher was told `accepted` for them: cutting them loses nothing acknowledged.
 * Corruption is damage to bytes that were written and fsynced (a flipped bit, garbage written
 * over a record): cutting there may drop acknowledged messages, so it is never done silently.
 *
 * The rule, starting at the first record that fails its check (at byte `at`):
 * 1. if a valid record (plausible length, matching CRC) starts at any later byte, it is
 *    corruption: a crash cannot write good records after a bad one;
 * 2. otherwise it is a torn tail when it can be the start of the record being written: fewer
 *    than 8 bytes (a partial header), a length that runs past the end of the file (a record cut
 *    short), or nothing but zero bytes from there to the end of the file (space the file system
 *    allocated but the crash kept from being written);
 * 3. anything else is corruption: a record whose whole length is in the file but whose checksum
 *    fails, or a length no writer could have written.
 * One case looks like a torn write and is cut as one: a bit flip in the length field of the very
 * last record that makes it point past the end of the file.
 */
import type { ByteSource } from '../files/chunked-reader.js';
import { MAX_RECORD_BYTES } from '../files/record-bytes.js';
import { RECORD_HEADER_BYTES, recordAt, scanRecordStream } from './record-format.js';

export type TailDamage =
  | { kind: 'torn'; reason: string }
  /** `validAfter`: valid records found after the damage (a lower bound on what it hides). */
  | { kind: 'corrupt'; reason: string; validAfter: number };

/** Offset of the first valid record starting after `at`, or -1. */
async function nextValidRecord(src: ByteSource, at: number): Promise<number> {
  for (let q = at + 1; q + RECORD_HEADER_BYTES <= src.size; q++) {
    // every event encodes to at least one byte: a zero length is never a record we wrote
    if ((await recordAt(src, q, 1)) !== undefined) return q;
  }
  return -1;
}

/** True when every byte from `from` to the end is zero (read a chunk at a time). */
async function zerosFrom(src: ByteSource, from: number): Promise<boolean> {
  const step = 1024 * 1024;
  for (let pos = from; pos < src.size; pos += step) {
    const chunk = await src.bytes(pos, step);
    for (let i = 0; i < chunk.length; i++) if (chunk[i] !== 0) return false;
  }
  return true;
}

/** Valid records from `from` on, up to the first that is not. */
async function countValid(src: ByteSource, from: number): Promise<{ count: number; end: number }> {
  let count = 0;
  const end = await scanRecordStream(src, from, () => {
    count++;
    return true;
  });
  return { count, end };
}

/** Classifies the bytes of `src` from `at` (where record scanning stopped) to its end. */
export async function classifyTail(src: ByteSource, at: number): Promise<TailDamage> {
  const next = await nextValidRecord(src, at);
  if (next >= 0) {
    const validAfter = (await countValid(src, next)).count;
    return {
      kind: 'corrupt',
      reason: `a bad record followed by ${validAfter} valid one(s) from byte ${next}: not a torn write`,
      validAfter,
    };
  }
  const rest = src.size - at;
  if (rest < RECORD_HEADER_BYTES) return { kind: 'torn', reason: 'a partial record header' };
  const header = await src.bytes(at, RECORD_HEADER_BYTES);
  const len = new DataView(header.buffer, header.byteOffset, 4).getUint32(0, true);
  if (len <= MAX_RECORD_BYTES && at + RECORD_HEADER_BYTES + len > src.size) {
    return { kind: 'torn', reason: 'a record cut short' };
  }
  if (await zerosFrom(src, at)) {
    return { kind: 'torn', reason: 'zero bytes to the end of the file (never written)' };
  }
  return {
    kind: 'corrupt',
    reason:
      len > MAX_RECORD_BYTES
        ? `a record header with an impossible length (${len})`
        : 'a complete record whose checksum fails (written and fsynced, then damaged)',
    validAfter: 0,
  };
}

/**
 * What a run of log bytes that is being set aside holds, from `from` to the end of `src`: valid
 * records (found by resynchronising after each damaged stretch) and damaged stretches (each
 * hides at least one record).
 */
export async function countRecords(src: ByteSource, from = 0): Promise<{ valid: number; damaged: number }> {
  let valid = 0;
  let damaged = 0;
  let pos = from;
  while (pos < src.size) {
    const scan = await countValid(src, pos);
    valid += scan.count;
    pos = scan.end;
    if (pos >= src.size) break;
    damaged++;
    const next = await nextValidRecord(src, pos);
    if (next < 0) break;
    pos = next;
  }
  return { valid, damaged };
}
