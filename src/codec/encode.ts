/**
 * Value encoding: the default JS -> AMQP mapping of values.ts, one writer per AMQP type choosing
 * the most compact constructor, and array element encoding (one constructor for all elements).
 */
import { AmqpEncodeError } from '../errors.js';
import { writeArray } from './encode-array.js';
import { Typed } from './typed.js';
import type { AmqpTypeName, AmqpValue } from './values.js';
import type { Writer } from './writer.js';

const MAX_U32 = 0xffffffff;
/** same cap as the decoder's: deeper values could not be decoded (and cyclic ones never end) */
const MAX_ENCODE_DEPTH = 64;

export function enter(w: Writer): void {
  if (++w.depth > MAX_ENCODE_DEPTH)
    throw new AmqpEncodeError(`value nested deeper than ${MAX_ENCODE_DEPTH} (or cyclic)`);
}

export function writeNull(w: Writer): void {
  w.u8(0x40);
}
export function writeBoolean(w: Writer, v: boolean): void {
  w.u8(v ? 0x41 : 0x42);
}
export function writeUint(w: Writer, v: number): void {
  if (v === 0) w.u8(0x43);
  else if (v < 256 && v > 0) {
    w.ensure(2);
    w.buf[w.pos++] = 0x52;
    w.buf[w.pos++] = v;
  } else {
    if (!(v >= 0 && v <= MAX_U32 && Number.isInteger(v)))
      throw new AmqpEncodeError(`uint out of range: ${v}`);
    w.u8(0x70);
    w.u32(v);
  }
}
export function writeUlong(w: Writer, v: number | bigint): void {
  if (typeof v === 'bigint') {
    if (v < 0n || v > 0xffffffffffffffffn) throw new AmqpEncodeError(`ulong out of range: ${v}`);
    if (v <= BigInt(Number.MAX_SAFE_INTEGER)) {
      writeUlong(w, Number(v));
      return;
    }
    w.u8(0x80);
    w.i64(v);
    return;
  }
  if (v === 0) w.u8(0x44);
  else if (v < 256 && v > 0 && Number.isInteger(v)) {
    w.ensure(2);
    w.buf[w.pos++] = 0x53;
    w.buf[w.pos++] = v;
  } else {
    if (!(v >= 0 && Number.isSafeInteger(v))) throw new AmqpEncodeError(`ulong out of range: ${v}`);
    w.u8(0x80);
    w.i64(v);
  }
}
function checkRange(type: string, v: number, min: number, max: number): void {
  if (!(v >= min && v <= max && Number.isInteger(v))) throw new AmqpEncodeError(`${type} out of range: ${v}`);
}
export function writeUbyte(w: Writer, v: number): void {
  checkRange('ubyte', v, 0, 0xff);
  w.u8(0x50);
  w.u8(v);
}
export function writeUshort(w: Writer, v: number): void {
  checkRange('ushort', v, 0, 0xffff);
  w.u8(0x60);
  w.u16(v);
}
export function writeInt(w: Writer, v: number): void {
  if (v >= -128 && v <= 127) {
    w.ensure(2);
    w.buf[w.pos++] = 0x54;
    w.buf[w.pos++] = v & 0xff;
  } else {
    w.u8(0x71);
    w.i32(v);
  }
}
export function writeLong(w: Writer, v: number | bigint): void {
  if (typeof v === 'bigint') {
    if (v < -0x8000000000000000n || v > 0x7fffffffffffffffn)
      throw new AmqpEncodeError(`long out of range: ${v}`);
    if (v >= -128n && v <= 127n) {
      writeLong(w, Number(v));
      return;
    }
  } else if (v >= -128 && v <= 127) {
    w.u8(0x55);
    w.u8(v & 0xff);
    return;
  } else if (!Number.isSafeInteger(v)) throw new AmqpEncodeError(`long out of range: ${v}`);
  w.u8(0x81);
  w.i64(v);
}
export function writeDouble(w: Writer, v: number): void {
  w.u8(0x82);
  w.f64(v);
}
export function writeTimestamp(w: Writer, v: Date): void {
  const t = v.getTime();
  if (!Number.isSafeInteger(t)) throw new AmqpEncodeError('invalid Date');
  w.u8(0x83);
  w.i64(t);
}

/** variable-width: str8/str32 etc. `code8` is 0xa1 (string) or 0xa3 (symbol) */
export function writeStringCode(w: Writer, s: string, code8: number): void {
  const n = s.length;
  if (n <= 85) {
    w.ensure(2 + n * 3);
    const at = w.pos;
    const b = w.buf;
    // short ASCII strings: a JS loop beats the native call
    let len = n;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        len = w.utf8At(s, at + 2);
        break;
      }
      b[at + 2 + i] = c;
    }
    w.buf[at] = code8;
    w.buf[at + 1] = len;
    w.pos = at + 2 + len;
    return;
  }
  w.ensure(5 + n * 3);
  const at = w.pos;
  const len = n > 255 ? w.utf8At(s, at + 5) : Buffer.byteLength(s);
  if (len <= 255) {
    w.buf[at] = code8;
    w.buf[at + 1] = len;
    w.utf8At(s, at + 2);
    w.pos = at + 2 + len;
  } else {
    if (n <= 255) w.utf8At(s, at + 5);
    w.buf[at] = code8 + 0x10;
    w.view.setUint32(at + 1, len);
    w.pos = at + 5 + len;
  }
}
export function writeString(w: Writer, s: string): void {
  writeStringCode(w, s, 0xa1);
}
export function writeSymbol(w: Writer, s: string): void {
  writeStringCode(w, s, 0xa3);
}
export function writeBinary(w: Writer, b: Uint8Array): void {
  const n = b.length;
  if (n <= 255) {
    w.ensure(2 + n);
    w.buf[w.pos++] = 0xa0;
    w.buf[w.pos++] = n;
  } else {
    w.ensure(5 + n);
    w.buf[w.pos++] = 0xb0;
    w.view.setUint32(w.pos, n);
    w.pos += 4;
  }
  w.buf.set(b, w.pos);
  w.pos += n;
}

/**
 * Compound header: optimistic 8-bit form (code8, size, count), widened to the 32-bit form
 * (code8 + 0x10) when the contents outgrow it. Returns the header position for `endCompound`.
 */
export function beginCompound(w: Writer, code8: number): number {
  w.ensure(3);
  const at = w.pos;
  w.buf[at] = code8;
  w.pos = at + 3;
  return at;
}
export function endCompound(w: Writer, at: number, count: number): void {
  const size = w.pos - at - 2; // bytes after the size field, count byte included
  if (size <= 255 && count <= 255) {
    w.buf[at + 1] = size;
    w.buf[at + 2] = count;
    return;
  }
  w.widen(at + 3, 6);
  w.buf[at] += 0x10;
  w.view.setUint32(at + 1, size + 3);
  w.view.setUint32(at + 5, count);
}

export function writeList(w: Writer, items: readonly unknown[]): void {
  if (items.length === 0) {
    w.u8(0x45);
    return;
  }
  enter(w);
  const at = beginCompound(w, 0xc0);
  for (let i = 0; i < items.length; i++) writeValue(w, items[i] as AmqpValue);
  endCompound(w, at, items.length);
  w.depth--;
}

export function writeMap(w: Writer, m: Map<AmqpValue, AmqpValue> | { [key: string]: AmqpValue }): void {
  enter(w);
  const at = beginCompound(w, 0xc1);
  let count = 0;
  if (m instanceof Map) {
    for (const [k, v] of m) {
      writeValue(w, k);
      writeValue(w, v);
      count += 2;
    }
  } else {
    for (const k of Object.keys(m)) {
      const v = m[k];
      if (v === undefined) continue;
      writeString(w, k);
      writeValue(w, v);
      count += 2;
    }
  }
  endCompound(w, at, count);
  w.depth--;
}

/** a map whose keys are written as symbols (fields, annotations); undefined values are skipped */
export function writeSymbolKeyMap(w: Writer, m: { [key: string]: AmqpValue }): void {
  enter(w);
  const at = beginCompound(w, 0xc1);
  let count = 0;
  for (const k of Object.keys(m)) {
    const v = m[k];
    if (v === undefined) continue;
    writeSymbol(w, k);
    writeValue(w, v);
    count += 2;
  }
  endCompound(w, at, count);
  w.depth--;
}

/** Encode any AmqpValue with the default mapping of values.ts. */
export function writeValue(w: Writer, v: AmqpValue): void {
  switch (typeof v) {
    case 'string':
      writeString(w, v);
      return;
    case 'number':
      if (Number.isInteger(v) && !Object.is(v, -0)) {
        if (v >= -0x80000000 && v <= 0x7fffffff) {
          writeInt(w, v);
          return;
        }
        if (Number.isSafeInteger(v)) {
          writeLong(w, v);
          return;
        }
      }
      writeDouble(w, v);
      return;
    case 'boolean':
      writeBoolean(w, v);
      return;
    case 'bigint':
      writeLong(w, v);
      return;
    case 'undefined':
      writeNull(w);
      return;
    case 'object':
      if (v === null) {
        writeNull(w);
        return;
      }
      if (v instanceof Uint8Array) {
        writeBinary(w, v);
        return;
      }
      if (v instanceof Typed) {
        writeTyped(w, v.type, v.value, v);
        return;
      }
      if (Array.isArray(v)) {
        writeList(w, v);
        return;
      }
      if (v instanceof Date) {
        writeTimestamp(w, v);
        return;
      }
      if (v instanceof Map) {
        writeMap(w, v);
        return;
      }
      writeMap(w, v as { [key: string]: AmqpValue });
      return;
    default:
      throw new AmqpEncodeError(`cannot encode a ${typeof v}`);
  }
}

function fixedBytes(type: string, v: unknown, width: number): Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== width)
    throw new AmqpEncodeError(`${type} needs ${width} bytes`);
  return v;
}

function uuidBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array && v.length === 16) return v;
  if (typeof v !== 'string') throw new AmqpEncodeError('uuid needs a string or 16 bytes');
  const hex = v.replace(/-/g, '');
  const b = Buffer.from(hex, 'hex');
  if (b.length !== 16 || hex.length !== 32) throw new AmqpEncodeError(`not a uuid: ${v}`);
  return b;
}

function charCode(v: unknown): number {
  const cp = typeof v === 'number' ? v : typeof v === 'string' ? v.codePointAt(0) : undefined;
  if (cp === undefined || cp < 0 || cp > 0x10ffff) throw new AmqpEncodeError('invalid char');
  return cp;
}

function num(type: string, v: unknown): number {
  if (typeof v !== 'number') throw new AmqpEncodeError(`${type} needs a number`);
  return v;
}
function int64(type: string, v: unknown): number | bigint {
  if (typeof v !== 'number' && typeof v !== 'bigint')
    throw new AmqpEncodeError(`${type} needs a number or bigint`);
  return v;
}

/** Encode `value` as exactly `type` (value as Typed carries it; `t` gives descriptor/elementType). */
export function writeTyped(w: Writer, type: AmqpTypeName, value: unknown, t?: Typed): void {
  switch (type) {
    case 'null':
      writeNull(w);
      return;
    case 'boolean':
      writeBoolean(w, value === true);
      return;
    case 'ubyte':
      writeUbyte(w, num(type, value));
      return;
    case 'ushort':
      writeUshort(w, num(type, value));
      return;
    case 'uint':
      writeUint(w, num(type, value));
      return;
    case 'ulong':
      writeUlong(w, int64(type, value));
      return;
    case 'byte':
      checkRange(type, num(type, value), -0x80, 0x7f);
      w.u8(0x51);
      w.u8((value as number) & 0xff);
      return;
    case 'short':
      checkRange(type, num(type, value), -0x8000, 0x7fff);
      w.u8(0x61);
      w.u16((value as number) & 0xffff);
      return;
    case 'int':
      checkRange(type, num(type, value), -0x80000000, 0x7fffffff);
      writeInt(w, value as number);
      return;
    case 'long':
      writeLong(w, int64(type, value));
      return;
    case 'float':
      w.u8(0x72);
      w.f32(num(type, value));
      return;
    case 'double':
      writeDouble(w, num(type, value));
      return;
    case 'decimal32':
      w.u8(0x74);
      w.raw(fixedBytes(type, value, 4));
      return;
    case 'decimal64':
      w.u8(0x84);
      w.raw(fixedBytes(type, value, 8));
      return;
    case 'decimal128':
      w.u8(0x94);
      w.raw(fixedBytes(type, value, 16));
      return;
    case 'char':
      w.u8(0x73);
      w.u32(charCode(value));
      return;
    case 'timestamp':
      if (typeof value === 'number') {
        writeTimestamp(w, new Date(value));
        return;
      }
      if (!(value instanceof Date)) throw new AmqpEncodeError('timestamp needs a Date');
      writeTimestamp(w, value);
      return;
    case 'uuid':
      w.u8(0x98);
      w.raw(uuidBytes(value));
      return;
    case 'binary':
      if (!(value instanceof Uint8Array)) throw new AmqpEncodeError('binary needs a Uint8Array');
      writeBinary(w, value);
      return;
    case 'string':
      if (typeof value !== 'string') throw new AmqpEncodeError('string needs a string');
      writeString(w, value);
      return;
    case 'symbol':
      if (typeof value !== 'string') throw new AmqpEncodeError('symbol needs a string');
      writeSymbol(w, value);
      return;
    case 'list':
      if (!Array.isArray(value)) throw new AmqpEncodeError('list needs an array');
      writeList(w, value);
      return;
    case 'map':
      if (value === null || typeof value !== 'object') throw new AmqpEncodeError('map needs a Map or object');
      writeMap(w, value as Map<AmqpValue, AmqpValue>);
      return;
    case 'array':
      if (!Array.isArray(value) || t?.elementType === undefined)
        throw new AmqpEncodeError('array needs values and an elementType');
      writeArray(w, t.elementType, value, t.descriptor);
      return;
    case 'described':
      enter(w);
      w.u8(0x00);
      writeValue(w, t === undefined ? null : (t.descriptor as AmqpValue));
      writeValue(w, value as AmqpValue);
      w.depth--;
      return;
    default:
      throw new AmqpEncodeError(`unknown AMQP type ${String(type)}`);
  }
}
