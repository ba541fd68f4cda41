/**
 * Explicit typing: writeTyped encodes a value as exactly the AMQP type a Typed names (the
 * non-default types, arrays and described values), checking that the value fits that type.
 */
import { AmqpEncodeError } from '../errors.js';
import { writeArray } from './encode-array.js';
import { enter } from './encode-compound.js';
import {
  checkRange,
  writeBinary,
  writeBoolean,
  writeDouble,
  writeInt,
  writeLong,
  writeNull,
  writeString,
  writeSymbol,
  writeTimestamp,
  writeUbyte,
  writeUint,
  writeUlong,
  writeUshort,
} from './encode-scalars.js';
import { writeList, writeMap, writeValue } from './encode-value.js';
import type { Typed } from './typed.js';
import type { AmqpTypeName, AmqpValue } from './values.js';
import type { Writer } from './writer.js';

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
