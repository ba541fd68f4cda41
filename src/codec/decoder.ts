/**
 * Value decoding: a bounds-checked cursor plus one table line per constructor code
 * (type, element width, body reader). Every failure is an AmqpDecodeError: sizes and counts read
 * off the wire are checked against the bytes that remain before anything is allocated, counts are
 * capped, and nesting depth is capped.
 */
import { utf8Slice } from '../common/utf8-slice.js';
import { AmqpDecodeError } from '../errors.js';
import { Typed, uuidToString } from './typed.js';
import type { AmqpTypeName, AmqpValue } from './values.js';

export const MAX_DEPTH = 64;
export const MAX_COUNT = 1 << 20;

export function decodeError(description: string): AmqpDecodeError {
  return new AmqpDecodeError('amqp:decode-error', description);
}

/** The bytes as a Buffer (a view, no copy), for Buffer's fast reads. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class Decoder {
  buf: Buffer;
  pos: number;
  /** reads never pass `end` (narrowed while inside a compound value) */
  end: number;
  depth = 0;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.buf = asBuffer(bytes);
    this.pos = start;
    this.end = end;
  }

  /**
   * Point this decoder at other bytes, as if new. The frame decoder keeps one and resets it per
   * frame instead of allocating a decoder (and often a Buffer view) for every frame.
   */
  reset(bytes: Uint8Array, start = 0, end = bytes.length): this {
    this.buf = asBuffer(bytes);
    this.pos = start;
    this.end = end;
    this.depth = 0;
    return this;
  }

  need(n: number): void {
    if (this.pos + n > this.end)
      throw decodeError(`truncated: need ${n} bytes at ${this.pos}, have ${this.end - this.pos}`);
  }
  u8(): number {
    if (this.pos >= this.end) throw decodeError(`truncated at ${this.pos}`);
    return this.buf[this.pos++];
  }
  u16(): number {
    this.need(2);
    const v = (this.buf[this.pos] << 8) | this.buf[this.pos + 1];
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    const v = ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;
    this.pos += 4;
    return v;
  }
  /** uint64 as number when safe, else bigint */
  u64(): number | bigint {
    this.need(8);
    const hi = this.buf.readUInt32BE(this.pos);
    const lo = this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    const v = hi * 4294967296 + lo;
    return Number.isSafeInteger(v) ? v : (BigInt(hi) << 32n) | BigInt(lo);
  }
  /** int64 as number when safe, else bigint */
  i64(): number | bigint {
    this.need(8);
    const hi = this.buf.readInt32BE(this.pos);
    const lo = this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    const v = hi * 4294967296 + lo;
    return Number.isSafeInteger(v) ? v : (BigInt(hi) << 32n) | BigInt(lo);
  }
  /** a view (not a copy) of the next n bytes */
  view8(n: number): Uint8Array {
    this.need(n);
    const b = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.pos, n);
    this.pos += n;
    return b;
  }
  utf8(n: number): string {
    this.need(n);
    const s = utf8Slice(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  enter(): void {
    if (++this.depth > MAX_DEPTH) throw decodeError(`nesting deeper than ${MAX_DEPTH}`);
  }

  /** read one whole value (constructor + body) with the value-model mapping of values.ts */
  value(): AmqpValue {
    const code = this.u8();
    if (code === 0x00) return this.described();
    const entry = CODES[code];
    if (entry === undefined)
      throw decodeError(`unknown constructor 0x${code.toString(16)} at ${this.pos - 1}`);
    return entry.wrap(entry.read(this));
  }

  described(): AmqpValue {
    this.enter();
    const descriptor = this.value();
    const value = this.value();
    this.depth--;
    return new Typed('described', value, descriptor);
  }

  /** element count of the compound most recently entered by `compound()` */
  count = 0;

  /** read the size/count header of a list/map/array (code already read); narrows `end`; sets `count`; returns the old end */
  compound(code: number): number {
    let size: number;
    let count: number;
    if (code === 0xc0 || code === 0xc1 || code === 0xe0) {
      size = this.u8();
      this.need(size);
      if (size < 1) throw decodeError('compound size smaller than its count field');
      count = this.u8();
      size -= 1;
    } else {
      size = this.u32();
      this.need(size);
      if (size < 4) throw decodeError('compound size smaller than its count field');
      count = this.u32();
      size -= 4;
    }
    if (count > size && code !== 0xe0 && code !== 0xf0)
      throw decodeError(`count ${count} exceeds ${size} bytes`);
    const oldEnd = this.end;
    this.end = this.pos + size;
    this.count = count;
    return oldEnd;
  }
  /** leave a compound: its contents must fill exactly its declared size */
  leave(oldEnd: number): void {
    if (this.pos !== this.end) throw decodeError(`compound value size mismatch at ${this.pos}`);
    this.end = oldEnd;
  }

  list(code: number): AmqpValue[] {
    if (code === 0x45) return [];
    this.enter();
    const oldEnd = this.compound(code);
    const count = this.count;
    const out: AmqpValue[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = this.value();
    this.leave(oldEnd);
    this.depth--;
    return out;
  }

  map(code: number): Map<AmqpValue, AmqpValue> | { [key: string]: AmqpValue } {
    this.enter();
    const oldEnd = this.compound(code);
    const count = this.count;
    if (count % 2 !== 0) throw decodeError('map with an odd number of elements');
    let obj: { [key: string]: AmqpValue } | undefined = {};
    let map: Map<AmqpValue, AmqpValue> | undefined;
    for (let i = 0; i < count; i += 2) {
      const k = this.value();
      const v = this.value();
      if (obj !== undefined && typeof k === 'string') {
        setKey(obj, k, v);
      } else {
        if (map === undefined) {
          map = new Map();
          if (obj !== undefined) for (const key of Object.keys(obj)) map.set(key, obj[key]);
          obj = undefined;
        }
        map.set(k, v);
      }
    }
    this.leave(oldEnd);
    this.depth--;
    return map ?? (obj as { [key: string]: AmqpValue });
  }

  array(code: number): Typed {
    this.enter();
    const oldEnd = this.compound(code);
    const count = this.count;
    let c = this.u8();
    let descriptor: AmqpValue | undefined;
    if (c === 0x00) {
      descriptor = this.value();
      c = this.u8();
    }
    const entry = CODES[c];
    if (entry === undefined || c === 0x00)
      throw decodeError(`unknown array element constructor 0x${c.toString(16)}`);
    const remaining = this.end - this.pos;
    if (count > remaining / Math.max(1, entry.width) || count > MAX_COUNT)
      throw decodeError(`array count ${count} cannot fit in ${remaining} bytes`);
    const out: unknown[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = entry.read(this);
    this.leave(oldEnd);
    this.depth--;
    return new Typed('array', out, descriptor, entry.type);
  }

  /** skip one whole value without building it (uses sizes of variable/compound values) */
  skip(): void {
    const code = this.u8();
    if (code === 0x00) {
      this.enter();
      this.skip();
      this.skip();
      this.depth--;
      return;
    }
    const entry = CODES[code];
    if (entry === undefined) throw decodeError(`unknown constructor 0x${code.toString(16)}`);
    if (code >= 0xa0) {
      const n = (code & 0x10) === 0 ? this.u8() : this.u32();
      this.need(n);
      this.pos += n;
    } else {
      this.need(entry.width);
      this.pos += entry.width;
    }
  }
}

function setKey(obj: { [key: string]: AmqpValue }, k: string, v: AmqpValue): void {
  if (k === '__proto__')
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[k] = v;
}

export { setKey };

export interface CodeEntry {
  type: AmqpTypeName;
  /** bytes of the body for fixed-width codes; the size prefix width for variable/compound codes */
  width: number;
  /** read the body (constructor already consumed) as the type's raw value */
  read: (d: Decoder) => unknown;
  /** raw value -> value-model value (plain JS when it re-encodes to the same type, else Typed) */
  wrap: (raw: unknown) => AmqpValue;
}

const plain = (raw: unknown): AmqpValue => raw as AmqpValue;
const typed =
  (type: AmqpTypeName) =>
  (raw: unknown): AmqpValue =>
    new Typed(type, raw);
const wrapLong = (raw: unknown): AmqpValue =>
  typeof raw === 'number' && raw >= -0x80000000 && raw <= 0x7fffffff
    ? new Typed('long', raw)
    : (raw as number);
const wrapDouble = (raw: unknown): AmqpValue =>
  Number.isSafeInteger(raw) && !Object.is(raw, -0) ? new Typed('double', raw) : (raw as number);

function readVar(d: Decoder, code: number): number {
  return (code & 0x10) === 0 ? d.u8() : d.u32();
}

export const CODES: (CodeEntry | undefined)[] = new Array(256).fill(undefined);
function def(
  code: number,
  type: AmqpTypeName,
  width: number,
  read: (d: Decoder) => unknown,
  wrap: (raw: unknown) => AmqpValue,
) {
  CODES[code] = { type, width, read, wrap };
}

// one line per constructor code (part 1, 1.6)
def(0x40, 'null', 0, () => null, plain);
def(0x41, 'boolean', 0, () => true, plain);
def(0x42, 'boolean', 0, () => false, plain);
def(
  0x56,
  'boolean',
  1,
  (d) => {
    const b = d.u8();
    if (b > 1) throw decodeError(`invalid boolean byte ${b}`);
    return b === 1;
  },
  plain,
);
def(0x50, 'ubyte', 1, (d) => d.u8(), typed('ubyte'));
def(0x60, 'ushort', 2, (d) => d.u16(), typed('ushort'));
def(0x70, 'uint', 4, (d) => d.u32(), typed('uint'));
def(0x52, 'uint', 1, (d) => d.u8(), typed('uint'));
def(0x43, 'uint', 0, () => 0, typed('uint'));
def(0x80, 'ulong', 8, (d) => d.u64(), typed('ulong'));
def(0x53, 'ulong', 1, (d) => d.u8(), typed('ulong'));
def(0x44, 'ulong', 0, () => 0, typed('ulong'));
def(0x51, 'byte', 1, (d) => (d.u8() << 24) >> 24, typed('byte'));
def(0x61, 'short', 2, (d) => (d.u16() << 16) >> 16, typed('short'));
def(0x71, 'int', 4, (d) => d.u32() | 0, plain);
def(0x54, 'int', 1, (d) => (d.u8() << 24) >> 24, plain);
def(0x81, 'long', 8, (d) => d.i64(), wrapLong);
def(0x55, 'long', 1, (d) => (d.u8() << 24) >> 24, wrapLong);
def(
  0x72,
  'float',
  4,
  (d) => {
    d.need(4);
    const v = d.buf.readFloatBE(d.pos);
    d.pos += 4;
    return v;
  },
  typed('float'),
);
def(
  0x82,
  'double',
  8,
  (d) => {
    d.need(8);
    const v = d.buf.readDoubleBE(d.pos);
    d.pos += 8;
    return v;
  },
  wrapDouble,
);
def(0x74, 'decimal32', 4, (d) => d.view8(4), typed('decimal32'));
def(0x84, 'decimal64', 8, (d) => d.view8(8), typed('decimal64'));
def(0x94, 'decimal128', 16, (d) => d.view8(16), typed('decimal128'));
def(
  0x73,
  'char',
  4,
  (d) => {
    const cp = d.u32();
    if (cp > 0x10ffff) throw decodeError(`invalid char code point ${cp}`);
    return String.fromCodePoint(cp);
  },
  typed('char'),
);
def(0x83, 'timestamp', 8, (d) => new Date(Number(d.i64())), plain);
def(
  0x98,
  'uuid',
  16,
  (d) => {
    d.need(16);
    const s = uuidToString(d.buf, d.pos);
    d.pos += 16;
    return s;
  },
  typed('uuid'),
);
def(0xa0, 'binary', 1, (d) => d.view8(d.u8()), plain);
def(0xb0, 'binary', 4, (d) => d.view8(d.u32()), plain);
def(0xa1, 'string', 1, (d) => d.utf8(readVar(d, 0xa1)), plain);
def(0xb1, 'string', 4, (d) => d.utf8(readVar(d, 0xb1)), plain);
def(0xa3, 'symbol', 1, (d) => d.utf8(readVar(d, 0xa3)), typed('symbol'));
def(0xb3, 'symbol', 4, (d) => d.utf8(readVar(d, 0xb3)), typed('symbol'));
def(0x45, 'list', 0, () => [], plain);
def(0xc0, 'list', 1, (d) => d.list(0xc0), plain);
def(0xd0, 'list', 4, (d) => d.list(0xd0), plain);
def(0xc1, 'map', 1, (d) => d.map(0xc1), plain);
def(0xd1, 'map', 4, (d) => d.map(0xd1), plain);
def(0xe0, 'array', 1, (d) => d.array(0xe0), plain);
def(0xf0, 'array', 4, (d) => d.array(0xf0), plain);
