/**
 * The default JS -> AMQP mapping of values.ts: writeValue picks the AMQP type from the JS value,
 * with the list and map encoders it recurses through.
 */
import { AmqpEncodeError } from '../errors.js';
import { beginCompound, endCompound, enter } from './encode-compound.js';
import {
  writeBinary,
  writeBoolean,
  writeDouble,
  writeInt,
  writeLong,
  writeNull,
  writeString,
  writeSymbol,
  writeTimestamp,
} from './encode-scalars.js';
import { writeTyped } from './encode-typed.js';
import { Typed } from './typed.js';
import type { AmqpValue } from './values.js';
import type { Writer } from './writer.js';

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
