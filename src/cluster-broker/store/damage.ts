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
import { crc32 } from './crc32.js';
import { MAX_RECORD_BYTES, RECORD_HEADER_BYTES, scanRecords } from './record-format.js';

export type TailDamage =
  | { kind: 'torn'; reason: string }
  /** `validAfter`: valid records found after the damage (a lower bound on what it hides). */
  | { kind: 'corrupt'; reason: string; validAfter: number };

/** Offset of the first valid record starting after `at`, or -1. */
function nextValidRecord(buf: Uint8Array, at: number): number {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let q = at + 1; q + RECORD_HEADER_BYTES <= buf.length; q++) {
    const len = view.getUint32(q, true);
    // every event encodes to at least one byte: a zero length is never a record we wrote
    if (len === 0 || len > MAX_RECORD_BYTES || q + RECORD_HEADER_BYTES + len > buf.length) continue;
    const payload = buf.subarray(q + RECORD_HEADER_BYTES, q + RECORD_HEADER_BYTES + len);
    if (crc32(payload, crc32(buf.subarray(q, q + 4))) === view.getUint32(q + 4, true)) return q;
  }
  return -1;
}

function zerosFrom(buf: Uint8Array, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

/** Classifies the bytes of `buf` from `at` (where record scanning stopped) to its end. */
export function classifyTail(buf: Uint8Array, at: number): TailDamage {
  const next = nextValidRecord(buf, at);
  if (next >= 0) {
    const validAfter = scanRecords(buf.subarray(next)).payloads.length;
    return {
      kind: 'corrupt',
      reason: `a bad record followed by ${validAfter} valid one(s) from byte ${next}: not a torn write`,
      validAfter,
    };
  }
  const rest = buf.length - at;
  if (rest < RECORD_HEADER_BYTES) return { kind: 'torn', reason: 'a partial record header' };
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const len = view.getUint32(at, true);
  if (len <= MAX_RECORD_BYTES && at + RECORD_HEADER_BYTES + len > buf.length) {
    return { kind: 'torn', reason: 'a record cut short' };
  }
  if (zerosFrom(buf, at)) {
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
 * What a run of log bytes that is being set aside holds: valid records (found by resynchronising
 * after each damaged stretch) and damaged stretches (each hides at least one record).
 */
export function countRecords(buf: Uint8Array): { valid: number; damaged: number } {
  let valid = 0;
  let damaged = 0;
  let pos = 0;
  while (pos < buf.length) {
    const scan = scanRecords(buf.subarray(pos));
    valid += scan.payloads.length;
    pos += scan.validBytes;
    if (pos >= buf.length) break;
    damaged++;
    const next = nextValidRecord(buf, pos);
    if (next < 0) break;
    pos = next;
  }
  return { valid, damaged };
}
