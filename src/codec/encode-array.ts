/**
 * Array encoding: one constructor (optionally described) shared by every element, chosen as the
 * smallest form that fits all of them, then the element bodies.
 */
import { AmqpEncodeError } from '../errors.js';
import { beginCompound, endCompound, enter, writeMap, writeTyped, writeValue } from './encode.js';
import { Typed } from './typed.js';
import type { AmqpTypeName, AmqpValue } from './values.js';
import type { Writer } from './writer.js';

const unwrap = (v: unknown): unknown => (v instanceof Typed ? v.value : v);

/** smallest single constructor that fits every element of the array */
function elementCode(type: AmqpTypeName, values: readonly unknown[]): number {
  switch (type) {
    case 'null':
      return 0x40;
    case 'boolean':
      return 0x56;
    case 'ubyte':
      return 0x50;
    case 'ushort':
      return 0x60;
    case 'byte':
      return 0x51;
    case 'short':
      return 0x61;
    case 'float':
      return 0x72;
    case 'double':
      return 0x82;
    case 'decimal32':
      return 0x74;
    case 'decimal64':
      return 0x84;
    case 'decimal128':
      return 0x94;
    case 'char':
      return 0x73;
    case 'timestamp':
      return 0x83;
    case 'uuid':
      return 0x98;
    case 'list':
      return 0xd0;
    case 'map':
      return 0xd1;
    case 'array':
      return 0xf0;
    case 'uint':
    case 'ulong':
      for (const v of values) {
        const n = unwrap(v);
        if (!(typeof n === 'number' && n >= 0 && n <= 255)) return type === 'uint' ? 0x70 : 0x80;
      }
      return type === 'uint' ? 0x52 : 0x53;
    case 'int':
    case 'long':
      for (const v of values) {
        const n = unwrap(v);
        if (!((typeof n === 'number' || typeof n === 'bigint') && n >= -128 && n <= 127))
          return type === 'int' ? 0x71 : 0x81;
      }
      return type === 'int' ? 0x54 : 0x55;
    case 'binary':
      for (const v of values) {
        const b = unwrap(v);
        if (b instanceof Uint8Array && b.length > 255) return 0xb0;
      }
      return 0xa0;
    case 'string':
    case 'symbol':
      for (const v of values) {
        const s = unwrap(v);
        if (typeof s === 'string' && (s.length > 255 || Buffer.byteLength(s) > 255))
          return type === 'string' ? 0xb1 : 0xb3;
      }
      return type === 'string' ? 0xa1 : 0xa3;
    default:
      throw new AmqpEncodeError(`arrays of ${type} are not supported`);
  }
}

/** write one element (without constructor) in the form of `code` */
function writeElement(w: Writer, type: AmqpTypeName, code: number, raw: unknown): void {
  const at = w.pos;
  switch (code) {
    case 0x40:
      return;
    case 0x56:
      w.u8(raw === true ? 1 : 0);
      return;
    case 0x52:
    case 0x53:
    case 0x54:
    case 0x55:
      w.u8(Number(raw) & 0xff);
      return;
    case 0xd0: {
      if (!Array.isArray(raw)) throw new AmqpEncodeError('list element needs an array');
      w.ensure(8);
      w.pos += 8;
      enter(w);
      for (const item of raw) writeValue(w, item as AmqpValue);
      w.depth--;
      w.view.setUint32(at, w.pos - at - 4);
      w.view.setUint32(at + 4, raw.length);
      return;
    }
    case 0xd1: {
      w.ensure(8);
      w.pos += 8;
      const start = w.pos;
      writeMap(w, raw as Map<AmqpValue, AmqpValue>);
      // reuse writeMap, then rewrite its header into the 32-bit body form
      const hdr = w.buf[start] === 0xc1 ? 3 : 9;
      const count = hdr === 3 ? w.buf[start + 2] : w.view.getUint32(start + 5);
      w.buf.copyWithin(start, start + hdr, w.pos);
      w.pos -= hdr;
      w.view.setUint32(at, w.pos - at - 4);
      w.view.setUint32(at + 4, count);
      return;
    }
    case 0xf0: {
      const t = raw instanceof Typed && raw.type === 'array' ? raw : undefined;
      if (t === undefined || !Array.isArray(t.value) || t.elementType === undefined)
        throw new AmqpEncodeError('array element needs a Typed array');
      w.ensure(8);
      w.pos += 8;
      enter(w);
      writeArrayBody(w, t.elementType, t.value, t.descriptor);
      w.depth--;
      w.view.setUint32(at, w.pos - at - 4);
      w.view.setUint32(at + 4, t.value.length);
      return;
    }
    default: {
      // every other form is "constructor + body": write it whole, then drop the constructor byte
      writeTyped(w, type, raw);
      if (w.buf[at] !== code) {
        // compact forms the per-value writer chose (e.g. 0x43 uint0) must become the array's form
        w.pos = at;
        writeWide(w, code, raw);
        return;
      }
      w.buf.copyWithin(at, at + 1, w.pos);
      w.pos -= 1;
    }
  }
}

/** element body in the wide form `code` for integer/variable types */
function writeWide(w: Writer, code: number, raw: unknown): void {
  switch (code) {
    case 0x70:
      w.u32(Number(raw));
      return;
    case 0x71:
      w.i32(Number(raw));
      return;
    case 0x80:
    case 0x81:
      w.i64(raw as number | bigint);
      return;
    case 0xa0:
    case 0xa1:
    case 0xa3: {
      const b = typeof raw === 'string' ? Buffer.from(raw) : (raw as Uint8Array);
      w.u8(b.length);
      w.raw(b);
      return;
    }
    case 0xb0:
    case 0xb1:
    case 0xb3: {
      const b = typeof raw === 'string' ? Buffer.from(raw) : (raw as Uint8Array);
      w.u32(b.length);
      w.raw(b);
      return;
    }
    default:
      throw new AmqpEncodeError(`cannot write array element form 0x${code.toString(16)}`);
  }
}

function writeArrayBody(
  w: Writer,
  type: AmqpTypeName,
  values: readonly unknown[],
  descriptor?: AmqpValue,
): void {
  if (descriptor !== undefined) {
    w.u8(0x00);
    writeValue(w, descriptor);
  }
  const code = elementCode(type, values);
  w.u8(code);
  for (const v of values) writeElement(w, type, code, type === 'array' ? v : unwrap(v));
}

/** an array: one constructor (optionally described), then the element bodies */
export function writeArray(
  w: Writer,
  type: AmqpTypeName,
  values: readonly unknown[],
  descriptor?: AmqpValue,
): void {
  enter(w);
  const at = beginCompound(w, 0xe0);
  writeArrayBody(w, type, values, descriptor);
  endCompound(w, at, values.length);
  w.depth--;
}

/** an array of symbols (the wire form of multiple-symbol fields) */
export function writeSymbolArray(w: Writer, values: readonly string[]): void {
  const at = beginCompound(w, 0xe0);
  let long = false;
  for (const s of values) if (s.length > 85 && Buffer.byteLength(s) > 255) long = true;
  w.u8(long ? 0xb3 : 0xa3);
  for (const s of values) {
    w.ensure(4 + s.length * 3);
    const p = w.pos;
    const n = w.utf8At(s, p + (long ? 4 : 1));
    if (long) w.view.setUint32(p, n);
    else w.buf[p] = n;
    w.pos = p + (long ? 4 : 1) + n;
  }
  endCompound(w, at, values.length);
}
