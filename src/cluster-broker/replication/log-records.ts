/**
 * Records of the append-only log file. Each record:
 *   u32 BE length of body | u32 BE crc32(body) | body = u8 kind + fields
 * kinds: 1 entry (f64 index, f64 term, u8 hasData, data...), 2 truncate (f64 from),
 *        3 base (f64 index, f64 term; first record of a rewritten file).
 * A torn or corrupt record ends the valid log: recovery truncates the file there.
 */
import { crc32 } from 'node:zlib';
import type { StoreOp } from './store-image.js';
import type { Entry } from './types.js';

const HEADER = 8;
const KIND_ENTRY = 1;
const KIND_TRUNCATE = 2;
const KIND_BASE = 3;

function record(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + body.length);
  out.writeUInt32BE(body.length, 0);
  out.writeUInt32BE(crc32(body), 4);
  body.copy(out, HEADER);
  return out;
}

/** One allocation per entry record: header, then body built in place. */
export function entryRecord(e: Entry): Buffer {
  const n = e.data ? e.data.length : 0;
  const out = Buffer.allocUnsafe(HEADER + 18 + n);
  out.writeUInt32BE(18 + n, 0);
  out[HEADER] = KIND_ENTRY;
  out.writeDoubleBE(e.index, HEADER + 1);
  out.writeDoubleBE(e.term, HEADER + 9);
  out[HEADER + 17] = e.data ? 1 : 0;
  if (e.data) out.set(e.data, HEADER + 18);
  out.writeUInt32BE(crc32(out.subarray(HEADER)), 4);
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

/**
 * Parse a log file. Returns the store operations of the valid records and the byte length of
 * the valid prefix (where a torn/corrupt tail starts, if any).
 */
export function parseLog(buf: Buffer): { ops: StoreOp[]; validLength: number } {
  const ops: StoreOp[] = [];
  let off = 0;
  while (buf.length - off >= HEADER) {
    const len = buf.readUInt32BE(off);
    if (len < 1 || buf.length - off - HEADER < len) break;
    const body = buf.subarray(off + HEADER, off + HEADER + len);
    if (crc32(body) !== buf.readUInt32BE(off + 4)) break;
    const kind = body[0];
    if (kind === KIND_ENTRY && len >= 18) {
      const data = body[17] === 1 ? new Uint8Array(body.subarray(18)) : null;
      ops.push({ kind: 'entry', entry: { index: body.readDoubleBE(1), term: body.readDoubleBE(9), data } });
    } else if (kind === KIND_TRUNCATE && len === 9) {
      ops.push({ kind: 'truncate', from: body.readDoubleBE(1) });
    } else if (kind === KIND_BASE && len === 17) {
      ops.push({ kind: 'rewrite', base: { index: body.readDoubleBE(1), term: body.readDoubleBE(9) } });
    } else {
      break;
    }
    off += HEADER + len;
  }
  return { ops, validLength: off };
}
