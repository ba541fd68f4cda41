/**
 * The one encoder for every composite in composites.ts: described lists with trailing nulls
 * omitted (each field table compiled once into its own writer), plus the field-type encoders.
 * Its decoding twin is composite-decode.ts.
 */
import { AmqpEncodeError } from '../errors.js';
import type { CompositeDef, FieldDef, FieldType } from './composites.js';
import { BY_CODE, COORDINATOR, ERROR, SOURCE, TARGET } from './composites.js';
import type { DeliveryState } from './contract.js';
import {
  beginCompound,
  endCompound,
  writeBinary,
  writeBoolean,
  writeMap,
  writeString,
  writeSymbol,
  writeSymbolKeyMap,
  writeTimestamp,
  writeUint,
  writeUlong,
  writeValue,
} from './encode.js';
import { writeSymbolArray } from './encode-array.js';
import type { AmqpValue } from './values.js';
import type { Writer } from './writer.js';

type Obj = Record<string, unknown>;

export function writeDescriptor(w: Writer, code: number): void {
  w.ensure(3);
  w.buf[w.pos++] = 0x00;
  w.buf[w.pos++] = 0x53;
  w.buf[w.pos++] = code;
}

/** encode `obj` (camelCase properties) as the described list `def`, trailing nulls omitted */
export function writeComposite(w: Writer, def: CompositeDef, obj: Obj): void {
  compiled(def).write(w, obj);
}

/** Whether `obj` has any field of `def` set (not null or undefined): would it encode as more than an empty list? */
export function hasAnyField(def: CompositeDef, obj: Obj): boolean {
  return compiled(def).hasAny(obj);
}

/** What a field table compiles to: its writer and its any-field-set test. */
interface Compiled {
  write(w: Writer, obj: Obj): void;
  hasAny(obj: Obj): boolean;
}
const COMPILED = new Map<CompositeDef, Compiled>();

/**
 * The writer and test of `def`, compiled once from its field table into straight-line code with
 * literal property names (as composite-decode.ts does for reading): reading fields by a computed
 * name (`obj[name]`) over every composite's and every message's shapes goes megamorphic, and each
 * such read then costs a global cache lookup. Field encoding itself stays in writeField. A table
 * whose names are not plain identifiers keeps the loops that read by name.
 */
function compiled(def: CompositeDef): Compiled {
  let c = COMPILED.get(def);
  if (c !== undefined) return c;
  const fields = def.fields;
  if (fields.every((f) => /^[a-zA-Z]+$/.test(f.name))) {
    const reads = fields.map((fd, i) => `const v${i} = obj.${fd.name};`).join(' ');
    let last = '-1';
    for (let i = 0; i < fields.length; i++) last = `v${i} != null ? ${i} : ${last}`;
    const writes = fields
      .map(
        (_, i) =>
          `if (last >= ${i}) { if (v${i} == null) nul(w, ${i}); else writeField(w, fields[${i}], v${i}); }`,
      )
      .join(' ');
    const write = new Function(
      'def',
      'fields',
      'writeDescriptor',
      'beginCompound',
      'endCompound',
      'writeField',
      'nul',
      'missing',
      `return function (w, obj) { ${reads} const last = ${last};
        if (last < def.lastMandatory) missing(def.lastMandatory);
        writeDescriptor(w, def.code);
        if (last < 0) { w.u8(0x45); return; }
        const at = beginCompound(w, 0xc0); ${writes} endCompound(w, at, last + 1); };`,
    )(
      def,
      fields,
      writeDescriptor,
      beginCompound,
      endCompound,
      writeField,
      nullField(def),
      missingField(def),
    ) as Compiled['write'];
    const hasAny = new Function(
      'obj',
      `return ${fields.map((fd) => `obj.${fd.name} != null`).join(' || ') || 'false'};`,
    ) as Compiled['hasAny'];
    c = { write, hasAny };
  } else {
    c = {
      write: (w, obj) => writeCompositeByName(w, def, obj),
      hasAny: (obj) => fields.some((fd) => obj[fd.name] != null),
    };
  }
  COMPILED.set(def, c);
  return c;
}

/** The refusal of a missing mandatory field (both writers throw it). */
function mandatoryMissing(def: CompositeDef, i: number): AmqpEncodeError {
  return new AmqpEncodeError(`${def.name}: mandatory field ${def.fields[i].specName} missing`);
}

function missingField(def: CompositeDef): (i: number) => never {
  return (i) => {
    throw mandatoryMissing(def, i);
  };
}

/** A null in the list: refused for a mandatory field. */
function nullField(def: CompositeDef): (w: Writer, i: number) => void {
  const missing = missingField(def);
  return (w, i) => {
    if (def.fields[i].mandatory) missing(i);
    w.u8(0x40);
  };
}

/** The same encoding, reading fields by name (a def whose names are not plain identifiers; tests compare the two). */
export function writeCompositeByName(w: Writer, def: CompositeDef, obj: Obj): void {
  const fields = def.fields;
  let last = fields.length - 1;
  while (last >= 0 && obj[fields[last].name] == null) last--;
  if (last < def.lastMandatory) throw mandatoryMissing(def, def.lastMandatory);
  writeDescriptor(w, def.code);
  if (last < 0) {
    w.u8(0x45);
    return;
  }
  const at = beginCompound(w, 0xc0);
  for (let i = 0; i <= last; i++) {
    const fd = fields[i];
    const v = obj[fd.name];
    if (v == null) {
      if (fd.mandatory) throw mandatoryMissing(def, i);
      w.u8(0x40);
    } else writeField(w, fd, v);
  }
  endCompound(w, at, last + 1);
}

/** encode a restricted described value (data, amqp-value, annotations...) */
export function writeRestricted(w: Writer, def: CompositeDef, v: unknown): void {
  writeDescriptor(w, def.code);
  writeFieldType(w, def.value ?? '*', v, def.name);
}

function writeField(w: Writer, fd: FieldDef, v: unknown): void {
  if (fd.multiple) {
    if (Array.isArray(v)) {
      if (fd.type !== 'symbol') throw new AmqpEncodeError(`${fd.specName}: multiple ${fd.type} unsupported`);
      writeSymbolArray(w, v as string[]);
      return;
    }
  }
  writeFieldType(w, fd.type, v, fd.specName);
}

function bad(name: string, type: string): AmqpEncodeError {
  return new AmqpEncodeError(`${name}: expected ${type}`);
}

function writeFieldType(w: Writer, type: FieldType, v: unknown, name: string): void {
  switch (type) {
    case 'uint':
      if (typeof v !== 'number') throw bad(name, 'a uint number');
      writeUint(w, v);
      return;
    case 'ushort':
      if (typeof v !== 'number' || !(v >= 0 && v <= 0xffff)) throw bad(name, 'a ushort number');
      w.u8(0x60);
      w.u16(v);
      return;
    case 'ubyte':
      if (typeof v !== 'number' || !(v >= 0 && v <= 0xff)) throw bad(name, 'a ubyte number');
      w.u8(0x50);
      w.u8(v);
      return;
    case 'ulong':
      if (typeof v !== 'number' && typeof v !== 'bigint') throw bad(name, 'a ulong number');
      writeUlong(w, v);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw bad(name, 'a boolean');
      writeBoolean(w, v);
      return;
    case 'string':
      if (typeof v !== 'string') throw bad(name, 'a string');
      writeString(w, v);
      return;
    case 'symbol':
      if (typeof v !== 'string') throw bad(name, 'a symbol string');
      writeSymbol(w, v);
      return;
    case 'binary':
      if (!(v instanceof Uint8Array)) throw bad(name, 'a Uint8Array');
      writeBinary(w, v);
      return;
    case 'timestamp':
      if (v instanceof Date) {
        writeTimestamp(w, v);
        return;
      }
      if (typeof v === 'number') {
        writeTimestamp(w, new Date(v));
        return;
      }
      throw bad(name, 'a Date');
    case 'fields':
      if (typeof v !== 'object' || v === null) throw bad(name, 'a record');
      if (v instanceof Map) {
        writeMap(w, v);
        return;
      }
      writeSymbolKeyMap(w, v as Record<string, AmqpValue>);
      return;
    case 'string-map':
      if (typeof v !== 'object' || v === null) throw bad(name, 'a record');
      writeMap(w, v as Record<string, AmqpValue>);
      return;
    case 'address':
    case '*':
      writeValue(w, v as AmqpValue);
      return;
    case 'message-id':
      if (typeof v === 'number' || typeof v === 'bigint') {
        writeUlong(w, v);
        return;
      }
      writeValue(w, v as AmqpValue);
      return;
    case 'error':
      writeComposite(w, ERROR, v as Obj);
      return;
    case 'delivery-state':
      writeDeliveryState(w, v as DeliveryState);
      return;
    case 'source':
      writeComposite(w, SOURCE, v as Obj);
      return;
    case 'target':
      writeComposite(w, (v as Obj).coordinator === true ? COORDINATOR : TARGET, v as Obj);
      return;
  }
}

export function writeDeliveryState(w: Writer, s: DeliveryState): void {
  const def = BY_CODE.get(stateCode(s.type));
  if (def === undefined) throw new AmqpEncodeError(`unknown delivery state ${String(s.type)}`);
  writeComposite(w, def, s as unknown as Obj);
}
const STATE_CODES: Record<string, number> = {
  received: 0x23,
  accepted: 0x24,
  rejected: 0x25,
  released: 0x26,
  modified: 0x27,
  declared: 0x33,
  'transactional-state': 0x34,
};
function stateCode(type: string): number {
  return STATE_CODES[type] ?? -1;
}
