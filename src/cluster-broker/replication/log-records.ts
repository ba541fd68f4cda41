/**
 * Records of the append-only log file. Each record:
 *   u32 BE length of body | u32 BE crc32(body) | u32 BE crc32(the 8 bytes before) | body
 *   body = u8 kind + fields
 * kinds: 1 entry (f64 index, f64 term, u8 hasData, data...), 2 truncate (f64 from),
 *        3 base (f64 index, f64 term; first record of a rewritten file).
 *
 * The header has its own checksum so that damage can be told from a torn tail (the FAST'18 CTRL
 * distinction): a crash in the middle of an append leaves an incomplete last record (or zeros
 * where the file grew), which is safe to cut, since nothing unsynced was ever acknowledged. A
 * complete record that fails its checksum, anywhere, is corruption: it may hold an entry this
 * member acknowledged, so it is not silently cut (file-storage.ts quarantines the file).
 */
import { crc32 } from '../files/crc32.js';
import type { Entry } from './raft/types.js';
import { isCountable } from './safe-numbers.js';
import type { StoreOp } from './store-image.js';

const HEADER = 12;
const KIND_ENTRY = 1;
const KIND_TRUNCATE = 2;
const KIND_BASE = 3;

/** Fills in a record's header for the `bodyLength` bytes written at `at + HEADER`. */
function sealAt(out: Buffer, at: number, bodyLength: number): void {
  out.writeUInt32BE(bodyLength, at);
  out.writeUInt32BE(crc32(out.subarray(at + HEADER, at + HEADER + bodyLength)), at + 4);
  out.writeUInt32BE(crc32(out.subarray(at, at + 8)), at + 8);
}

function record(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + body.length);
  body.copy(out, HEADER);
  sealAt(out, 0, body.length);
  return out;
}

/** Bytes of the entry record of `e`. */
export function entryRecordSize(e: Entry): number {
  return HEADER + 18 + (e.data ? e.data.length : 0);
}

/** Writes the entry record of `e` at `at` in `out` (room checked by the caller); returns its end. */
export function writeEntryRecord(out: Buffer, at: number, e: Entry): number {
  const body = at + HEADER;
  out[body] = KIND_ENTRY;
  out.writeDoubleBE(e.index, body + 1);
  out.writeDoubleBE(e.term, body + 9);
  out[body + 17] = e.data ? 1 : 0;
  if (e.data) out.set(e.data, body + 18);
  const length = 18 + (e.data ? e.data.length : 0);
  sealAt(out, at, length);
  return body + length;
}

/** One allocation per entry record: header, then body built in place. */
export function entryRecord(e: Entry): Buffer {
  const out = Buffer.allocUnsafe(entryRecordSize(e));
  writeEntryRecord(out, 0, e);
  return out;
}

export function truncateRecord(from: number): Buffer {
  const body = Buffer.allocUnsafe(9);
  body[0] = KIND_TRUNCATE;
  body.writeDoubleBE(from, 1);
  return record(body);
}

export function baseRecord(index: number, term: number): Buffer {
  const body = Buffer.allocUnsafe(17);
  body[0] = KIND_BASE;
  body.writeDoubleBE(index, 1);
  body.writeDoubleBE(term, 9);
  return record(body);
}

/** Where the valid records end, and why. */
export type LogDamage =
  | { readonly kind: 'torn'; readonly offset: number; readonly bytes: number }
  | { readonly kind: 'corrupt'; readonly offset: number; readonly reason: string };

export interface ParsedLog {
  /** Store operations of the valid records, in order. */
  readonly ops: StoreOp[];
  /** Byte length of the valid prefix. */
  readonly validLength: number;
  /** Absent when the whole file is valid. */
  readonly damage?: LogDamage;
}

function allZero(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

function decodeBody(body: Buffer): StoreOp | string {
  const kind = body[0];
  if (kind === KIND_ENTRY && body.length >= 18) {
    const index = body.readDoubleBE(1);
    const term = body.readDoubleBE(9);
    if (!isCountable(index) || !isCountable(term)) return `entry ${index}@${term} outside the safe integers`;
    const data = body[17] === 1 ? new Uint8Array(body.subarray(18)) : null;
    return { kind: 'entry', entry: { index, term, data } };
  }
  if (kind === KIND_TRUNCATE && body.length === 9) {
    const from = body.readDoubleBE(1);
    return isCountable(from) ? { kind: 'truncate', from } : `truncate ${from} outside the safe integers`;
  }
  if (kind === KIND_BASE && body.length === 17) {
    const index = body.readDoubleBE(1);
    const term = body.readDoubleBE(9);
    if (!isCountable(index) || !isCountable(term)) return `base ${index}@${term} outside the safe integers`;
    return { kind: 'rewrite', base: { index, term } };
  }
  return `unknown record kind ${kind} of ${body.length} bytes`;
}

/**
 * Parse a log file: the store operations of the valid prefix, and what ends it if it is not the
 * end of the file. A torn tail: fewer bytes than a header at the end, a valid header whose body
 * runs past the end of the file, or nothing but zeros from the bad record on. Anything else
 * (a bad header or body checksum of a complete record, an unknown kind, a number outside the
 * safe integers) is corruption.
 */
export function parseLog(buf: Buffer): ParsedLog {
  const ops: StoreOp[] = [];
  let off = 0;
  const torn = (): ParsedLog => ({
    ops,
    validLength: off,
    damage: { kind: 'torn', offset: off, bytes: buf.length - off },
  });
  const corrupt = (reason: string): ParsedLog =>
    allZero(buf, off) ? torn() : { ops, validLength: off, damage: { kind: 'corrupt', offset: off, reason } };
  while (off < buf.length) {
    if (buf.length - off < HEADER) return torn();
    if (crc32(buf.subarray(off, off + 8)) !== buf.readUInt32BE(off + 8))
      return corrupt('bad record header checksum');
    const len = buf.readUInt32BE(off);
    if (buf.length - off - HEADER < len) return torn();
    const body = buf.subarray(off + HEADER, off + HEADER + len);
    if (len < 1 || crc32(body) !== buf.readUInt32BE(off + 4)) return corrupt('bad record checksum');
    const op = decodeBody(body);
    if (typeof op === 'string') return corrupt(op);
    ops.push(op);
    off += HEADER + len;
  }
  return { ops, validLength: off };
}
