/**
 * Log record framing: [payload length u32 LE][crc32 u32 LE over length bytes + payload][payload].
 * The CRC covers the length too, so a torn or bit-flipped length is caught, not trusted.
 */
import { crc32 } from './crc32.js';

export const RECORD_HEADER_BYTES = 8;
/** Upper bound on one record's payload, to reject a garbage length before allocating. */
export const MAX_RECORD_BYTES = 1 << 30;

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
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const payloads: Uint8Array[] = [];
  let pos = 0;
  while (pos + RECORD_HEADER_BYTES <= buf.length) {
    const len = view.getUint32(pos, true);
    if (len > MAX_RECORD_BYTES || pos + RECORD_HEADER_BYTES + len > buf.length) break;
    const expected = view.getUint32(pos + 4, true);
    const payload = buf.subarray(pos + RECORD_HEADER_BYTES, pos + RECORD_HEADER_BYTES + len);
    if (crc32(payload, crc32(buf.subarray(pos, pos + 4))) !== expected) break;
    payloads.push(payload);
    pos += RECORD_HEADER_BYTES + len;
  }
  return { payloads, validBytes: pos };
}
