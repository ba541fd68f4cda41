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
 *
 * A body is at most MAX_RECORD_BYTES (the single-node log's record limit, one number for both
 * formats): an entry whose record would be larger is refused before it is proposed
 * (`assertEntryFits`), and a reader takes a longer length for damage before it reads the body
 * (docs/production.md#record-limit). The file is read a chunk at a time (`readLog`), never whole:
 * a log past 2 GiB opens like any other.
 */
import type { ByteSource } from '../files/chunked-reader.js';
import { crc32, crc32Range } from '../files/crc32.js';
import { RecordTooLargeError } from '../files/errors.js';
import { MAX_RECORD_BYTES } from '../files/record-bytes.js';
import type { Entry } from './raft/types.js';
import { isCountable } from './safe-numbers.js';
import type { StoreOp } from './store-image.js';

const HEADER = 12;
/** Fields of an entry record's body before its data: kind, index, term, hasData. */
const ENTRY_FIELDS = 18;
const KIND_ENTRY = 1;
const KIND_TRUNCATE = 2;
const KIND_BASE = 3;

/** Fills in a record's header for the `bodyLength` bytes written at `at + HEADER`. */
function sealAt(out: Buffer, at: number, bodyLength: number): void {
  sealHeader(out, at, bodyLength, crc32(out.subarray(at + HEADER, at + HEADER + bodyLength)));
}

/** Fills in a record's header, given its body's length and checksum. */
function sealHeader(out: Buffer, at: number, bodyLength: number, bodyCrc: number): void {
  out.writeUInt32BE(bodyLength, at);
  out.writeUInt32BE(bodyCrc, at + 4);
  out.writeUInt32BE(crc32Range(out, at, at + 8), at + 8);
}

function record(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + body.length);
  body.copy(out, HEADER);
  sealAt(out, 0, body.length);
  return out;
}

/** The largest entry data a record holds (its body is the data and 18 bytes of fields). */
export const MAX_ENTRY_DATA_BYTES = MAX_RECORD_BYTES - 18;

/**
 * Throws RecordTooLargeError when an entry of `data` would not fit in one log record: checked
 * before it is proposed, so no member ever writes a record its reader would call damaged.
 */
export function assertEntryFits(data: Uint8Array | null): void {
  if (data !== null && data.length > MAX_ENTRY_DATA_BYTES)
    throw new RecordTooLargeError(data.length, MAX_ENTRY_DATA_BYTES);
}

/** Bytes of the entry record of `e`. */
export function entryRecordSize(e: Entry): number {
  return HEADER + ENTRY_FIELDS + (e.data ? e.data.length : 0);
}

/**
 * Writes the entry record of `e` at `at` in `out` (room checked by the caller); returns its end.
 * Once per replicated entry on every member: the checksums are taken over the entry's own bytes
 * and over ranges of `out`, not over views made for them (two objects per record otherwise).
 */
export function writeEntryRecord(out: Buffer, at: number, e: Entry): number {
  const body = at + HEADER;
  out[body] = KIND_ENTRY;
  out.writeDoubleBE(e.index, body + 1);
  out.writeDoubleBE(e.term, body + 9);
  out[body + 17] = e.data ? 1 : 0;
  const fields = crc32Range(out, body, body + ENTRY_FIELDS);
  let length = ENTRY_FIELDS;
  let bodyCrc = fields;
  if (e.data) {
    out.set(e.data, body + ENTRY_FIELDS);
    length += e.data.length;
    bodyCrc = crc32(e.data, fields);
  }
  sealHeader(out, at, length, bodyCrc);
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

/** Bytes of a possibly torn tail checked for zeros at a time. */
const ZERO_SCAN_BYTES = 1024 * 1024;

/** The same bytes as a Buffer (no copy), for its big-endian readers. */
function bufferView(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function isZero(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
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

/** A read the parser asks for: bytes [pos, pos + length) of the file. */
interface ReadRequest {
  readonly pos: number;
  readonly length: number;
}

/**
 * The parser, as a generator of the reads it needs (each answered with a view valid until the
 * next one), so one set of rules serves a whole buffer (`parseLog`) and a file read in chunks
 * (`readLog`). The valid prefix's store operations, and what ends it if it is not the end of the
 * file. A torn tail: fewer bytes than a header at the end, a valid header whose body runs past the
 * end of the file, or nothing but zeros from the bad record on. Anything else (a bad header or body
 * checksum of a complete record, a length past MAX_RECORD_BYTES, an unknown kind, a number outside
 * the safe integers) is corruption.
 */
function* logParser(size: number): Generator<ReadRequest, ParsedLog, Uint8Array> {
  const ops: StoreOp[] = [];
  let off = 0;
  const torn = (): ParsedLog => ({
    ops,
    validLength: off,
    damage: { kind: 'torn', offset: off, bytes: size - off },
  });
  function* corrupt(reason: string): Generator<ReadRequest, ParsedLog, Uint8Array> {
    for (let at = off; at < size; at += ZERO_SCAN_BYTES) {
      const chunk = yield { pos: at, length: Math.min(ZERO_SCAN_BYTES, size - at) };
      if (!isZero(chunk)) return { ops, validLength: off, damage: { kind: 'corrupt', offset: off, reason } };
    }
    return torn();
  }
  while (off < size) {
    if (size - off < HEADER) return torn();
    const header = bufferView(yield { pos: off, length: HEADER });
    if (crc32(header.subarray(0, 8)) !== header.readUInt32BE(8))
      return yield* corrupt('bad record header checksum');
    const len = header.readUInt32BE(0);
    const bodyCrc = header.readUInt32BE(4);
    if (size - off - HEADER < len) return torn();
    // checked before the body is read: no buffer is sized by an unchecked length
    if (len > MAX_RECORD_BYTES) return yield* corrupt(`record length ${len} past the limit`);
    const body = bufferView(yield { pos: off + HEADER, length: len });
    if (len < 1 || crc32(body) !== bodyCrc) return yield* corrupt('bad record checksum');
    const op = decodeBody(body);
    if (typeof op === 'string') return yield* corrupt(op);
    ops.push(op);
    off += HEADER + len;
  }
  return { ops, validLength: off };
}

/** Parse a log held whole in memory (what a test's disk saw written): logParser's rules. */
export function parseLog(buf: Uint8Array): ParsedLog {
  const parser = logParser(buf.length);
  for (let step = parser.next(); ; ) {
    if (step.done) return step.value;
    step = parser.next(buf.subarray(step.value.pos, step.value.pos + step.value.length));
  }
}

/** Parse a log file read from `src` a chunk at a time (any size): logParser's rules. */
export async function readLog(src: ByteSource): Promise<ParsedLog> {
  const parser = logParser(src.size);
  for (let step = parser.next(); ; ) {
    if (step.done) return step.value;
    const { pos, length } = step.value;
    step = parser.next(src.peek(pos, length) ?? (await src.bytes(pos, length)));
  }
}
