/**
 * The header every log segment starts with: [magic 'QSG1'][first index f64 LE][crc32 u32 LE of
 * the 12 bytes before it]. It makes a segment self-describing: garbage at the start of a segment,
 * or a file renamed to the wrong index, is found on open instead of being read as records.
 */
import { crc32 } from '../files/crc32.js';

export const SEGMENT_HEADER_BYTES = 16;
const MAGIC = [0x51, 0x53, 0x47, 0x31];

export function segmentHeader(start: number): Uint8Array {
  const out = new Uint8Array(SEGMENT_HEADER_BYTES);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  view.setFloat64(4, start, true);
  view.setUint32(12, crc32(out.subarray(0, 12)), true);
  return out;
}

export type HeaderCheck =
  | { status: 'ok' }
  /** Shorter than a header, and a prefix of the right one or zero bytes: a crash while the segment was being created. */
  | { status: 'torn' }
  | { status: 'bad'; reason: string };

/** Checks the header of a segment file whose name says it starts at `start`. */
export function checkSegmentHeader(buf: Uint8Array, start: number): HeaderCheck {
  const expected = segmentHeader(start);
  if (buf.length < SEGMENT_HEADER_BYTES) {
    const present = buf.subarray(0, buf.length);
    const prefix = present.every((b, i) => b === expected[i]);
    const zeros = present.every((b) => b === 0);
    return prefix || zeros
      ? { status: 'torn' }
      : { status: 'bad', reason: `a ${buf.length}-byte segment header that no writer wrote` };
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (MAGIC.some((b, i) => buf[i] !== b))
    return { status: 'bad', reason: 'not a segment header (bad magic)' };
  if (view.getUint32(12, true) !== crc32(buf.subarray(0, 12))) {
    return { status: 'bad', reason: 'segment header checksum mismatch' };
  }
  const first = view.getFloat64(4, true);
  if (first !== start) {
    return { status: 'bad', reason: `segment header says first index ${first}, its name says ${start}` };
  }
  return { status: 'ok' };
}
