/**
 * Log record framing: [payload length u32 LE][crc32 u32 LE over length bytes + payload][payload].
 * The CRC covers the length too, so a torn or bit-flipped length is caught, not trusted.
 */

import type { ByteSource } from '../files/chunked-reader.js';
import { crc32 } from '../files/crc32.js';

export const RECORD_HEADER_BYTES = 8;

import { MAX_RECORD_BYTES } from '../files/record-bytes.js';

/** The payload length in a record header (8 bytes at `pos` of `buf`). */
function headerLength(buf: Uint8Array, pos: number): number {
  return new DataView(buf.buffer, buf.byteOffset + pos, 4).getUint32(0, true);
}

/** The checksum a record header holds, and the one its length bytes start (covers the length too). */
function headerCrcs(buf: Uint8Array, pos: number): { expected: number; ofLength: number } {
  const expected = new DataView(buf.buffer, buf.byteOffset + pos + 4, 4).getUint32(0, true);
  return { expected, ofLength: crc32(buf.subarray(pos, pos + 4)) };
}

/** Writes one framed record into `out` at `offset`; returns the offset after it. */
export function frameRecord(payload: Uint8Array, out: Uint8Array, offset: number): number {
  out.set(payload, offset + RECORD_HEADER_BYTES);
  return sealRecord(out, offset, payload.length);
}

/**
 * Fills in the header of the record at `offset` in `out` whose `length` payload bytes already
 * follow the header's RECORD_HEADER_BYTES; returns the offset after the record.
 */
export function sealRecord(out: Uint8Array, offset: number, length: number): number {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(offset, length, true);
  const payload = out.subarray(offset + RECORD_HEADER_BYTES, offset + RECORD_HEADER_BYTES + length);
  const crc = crc32(payload, crc32(out.subarray(offset, offset + 4)));
  view.setUint32(offset + 4, crc, true);
  return offset + RECORD_HEADER_BYTES + length;
}

export interface ScanResult {
  /** Payloads of the valid records, in order (views into the scanned buffer). */
  payloads: Uint8Array[];
  /** Bytes from the start that hold whole valid records; anything after is a torn/corrupt tail. */
  validBytes: number;
}

/** Reads records until the end or the first record that is incomplete or fails its CRC. */
export function scanRecords(buf: Uint8Array): ScanResult {
  const payloads: Uint8Array[] = [];
  let pos = 0;
  while (pos + RECORD_HEADER_BYTES <= buf.length) {
    const len = headerLength(buf, pos);
    if (len > MAX_RECORD_BYTES || pos + RECORD_HEADER_BYTES + len > buf.length) break;
    const { expected, ofLength } = headerCrcs(buf, pos);
    const payload = buf.subarray(pos + RECORD_HEADER_BYTES, pos + RECORD_HEADER_BYTES + len);
    if (crc32(payload, ofLength) !== expected) break;
    payloads.push(payload);
    pos += RECORD_HEADER_BYTES + len;
  }
  return { payloads, validBytes: pos };
}

/**
 * The valid record at `pos` of `src`, or undefined: its header, a length no larger than
 * MAX_RECORD_BYTES (checked before its payload is read) that ends within the source, and a
 * matching checksum. `minLength` rejects shorter payloads. The payload is a view valid until the
 * source's next read.
 */
export async function recordAt(src: ByteSource, pos: number, minLength = 0): Promise<Uint8Array | undefined> {
  if (pos + RECORD_HEADER_BYTES > src.size) return undefined;
  const header = src.peek(pos, RECORD_HEADER_BYTES) ?? (await src.bytes(pos, RECORD_HEADER_BYTES));
  const len = headerLength(header, 0);
  if (len < minLength || len > MAX_RECORD_BYTES || pos + RECORD_HEADER_BYTES + len > src.size)
    return undefined;
  const { expected, ofLength } = headerCrcs(header, 0);
  const at = pos + RECORD_HEADER_BYTES;
  const payload = src.peek(at, len) ?? (await src.bytes(at, len));
  return crc32(payload, ofLength) === expected ? payload : undefined;
}

/**
 * Scans the records of `src` from `from`, one at a time (any file size: nothing but the current
 * read chunk is held), calling `onRecord` with each valid one (a view valid during the call).
 * Stops at the end, at the first record that is incomplete or fails its check, or when
 * `onRecord` returns false. Returns where it stopped: the end of the last record accepted.
 */
export async function scanRecordStream(
  src: ByteSource,
  from: number,
  onRecord: (payload: Uint8Array, offset: number) => boolean,
): Promise<number> {
  let pos = from;
  for (;;) {
    const payload = await recordAt(src, pos);
    if (payload === undefined || onRecord(payload, pos) === false) return pos;
    pos += RECORD_HEADER_BYTES + payload.length;
  }
}
