/**
 * The one generic decoder for every composite in composites.ts: described lists, short lists
 * accepted (missing trailing fields are null), plus the field-type decoders. Its encoding twin is
 * composite-encode.ts.
 */
import {
  BY_CODE,
  BY_SYMBOL,
  COORDINATOR,
  type CompositeDef,
  ERROR,
  type FieldDef,
  type FieldType,
  SOURCE,
} from './composites.js';
import type { AmqpErrorBody, DeliveryState } from './contract.js';
import { type Decoder, decodeError, setKey } from './decoder.js';
import { Typed } from './typed.js';
import type { AmqpValue } from './values.js';

type Obj = Record<string, unknown>;

/** read a descriptor (constructor 0x00 already consumed) and find its composite */
export function readDescriptor(d: Decoder): CompositeDef | undefined {
  const c = d.u8();
  let code: number | bigint;
  switch (c) {
    case 0x53:
      code = d.u8();
      break;
    case 0x44:
      code = 0;
      break;
    case 0x80:
      code = d.u64();
      break;
    case 0xa3:
    case 0xb3:
      return BY_SYMBOL.get(d.utf8(c === 0xa3 ? d.u8() : d.u32()));
    default:
      throw decodeError(`invalid descriptor constructor 0x${c.toString(16)}`);
  }
  return typeof code === 'number' ? BY_CODE.get(code) : undefined;
}

/** read the list body of `def` (descriptor consumed) into `out` (a new object if not given) */
export function readCompositeBody(d: Decoder, def: CompositeDef, out: Obj = {}): Obj {
  const code = d.u8();
  if (code === 0x45) {
    if (def.lastMandatory >= 0)
      throw decodeError(`${def.name}: mandatory field ${def.fields[0].specName} missing`);
    return out;
  }
  if (code !== 0xc0 && code !== 0xd0)
    throw decodeError(`${def.name}: expected a list, got 0x${code.toString(16)}`);
  d.enter();
  const oldEnd = d.compound(code);
  const count = d.count;
  const fields = def.fields;
  fieldReader(def)(d, out, Math.min(count, fields.length));
  for (let i = fields.length; i < count; i++) d.skip(); // fields of a later protocol version: ignore
  if (count <= def.lastMandatory)
    throw decodeError(`${def.name}: mandatory field ${fields[def.lastMandatory].specName} missing`);
  d.leave(oldEnd);
  d.depth--;
  return out;
}

type FieldsReader = (d: Decoder, out: Obj, n: number) => void;
const READERS = new Map<CompositeDef, FieldsReader>();

/** read one field of `def` (undefined for null); throws for a null mandatory field */
function readOne(d: Decoder, def: CompositeDef, fd: FieldDef): unknown {
  const v = fd.multiple ? readMultiple(d, fd, def) : readField(d, fd.type, def, fd);
  if (v === undefined && fd.mandatory)
    throw decodeError(`${def.name}: mandatory field ${fd.specName} is null`);
  return v;
}

/**
 * The field loop of `def`, compiled once from its field table into straight-line code with
 * literal property names: generic keyed stores (`out[name] = v`) over ~40 composite shapes go
 * megamorphic and dominated frame decoding. The generated code only calls `readOne` per field.
 */
function fieldReader(def: CompositeDef): FieldsReader {
  let r = READERS.get(def);
  if (r !== undefined) return r;
  const fields = def.fields;
  if (fields.every((f) => /^[a-zA-Z]+$/.test(f.name))) {
    const lines = fields.map(
      (f, i) =>
        `if (n <= ${i}) return; v = readOne(d, def, fields[${i}]); if (v !== undefined) out.${f.name} = v;`,
    );
    r = new Function(
      'readOne',
      'def',
      'fields',
      `return function (d, out, n) { let v; ${lines.join(' ')} };`,
    )(readOne, def, fields) as FieldsReader;
  } else {
    r = (d, out, n) => {
      for (let i = 0; i < n; i++) {
        const v = readOne(d, def, fields[i]);
        if (v !== undefined) out[fields[i].name] = v;
      }
    };
  }
  READERS.set(def, r);
  return r;
}

function mismatch(def: CompositeDef, fd: FieldDef | undefined, expected: string, code: number): never {
  throw decodeError(
    `${def.name}${fd ? `.${fd.specName}` : ''}: expected ${expected}, got constructor 0x${code.toString(16)}`,
  );
}

function readMultiple(d: Decoder, fd: FieldDef, def: CompositeDef): unknown {
  const c = d.buf[d.pos];
  if (c === 0xe0 || c === 0xf0) {
    const v = d.value() as Typed;
    if (v.elementType !== fd.type && !(fd.type === 'symbol' && v.elementType === 'string'))
      mismatch(def, fd, `array of ${fd.type}`, c);
    return v.value;
  }
  const one = readField(d, fd.type, def, fd);
  return one === undefined ? undefined : [one];
}

function readUnsigned(
  d: Decoder,
  def: CompositeDef,
  fd: FieldDef | undefined,
  max: number,
): number | undefined {
  const c = d.u8();
  let v: number | bigint;
  switch (c) {
    case 0x40:
      return undefined;
    case 0x43:
    case 0x44:
      return 0;
    case 0x50:
    case 0x52:
    case 0x53:
      v = d.u8();
      break;
    case 0x60:
      v = d.u16();
      break;
    case 0x70:
      v = d.u32();
      break;
    case 0x80:
      v = d.u64();
      break;
    default:
      return mismatch(def, fd, 'an unsigned integer', c);
  }
  if (typeof v !== 'number' || v > max) throw decodeError(`${def.name}.${fd?.specName}: ${v} out of range`);
  return v;
}

/** one field of type `type`; undefined for null */
export function readField(d: Decoder, type: FieldType, def: CompositeDef, fd?: FieldDef): unknown {
  switch (type) {
    case 'uint':
      return readUnsigned(d, def, fd, 0xffffffff);
    case 'ushort':
      return readUnsigned(d, def, fd, 0xffff);
    case 'ubyte':
      return readUnsigned(d, def, fd, 0xff);
    case 'ulong':
      return readUnsigned(d, def, fd, Number.MAX_SAFE_INTEGER);
    case 'boolean': {
      const c = d.u8();
      if (c === 0x41) return true;
      if (c === 0x42) return false;
      if (c === 0x40) return undefined;
      if (c === 0x56) {
        const b = d.u8();
        if (b > 1) throw decodeError(`invalid boolean byte ${b}`);
        return b === 1;
      }
      return mismatch(def, fd, 'a boolean', c);
    }
    case 'string':
    case 'symbol': {
      const c = d.u8();
      if (c === 0xa1 || c === 0xa3) return d.utf8(d.u8());
      if (c === 0xb1 || c === 0xb3) return d.utf8(d.u32());
      if (c === 0x40) return undefined;
      return mismatch(def, fd, `a ${type}`, c);
    }
    case 'binary': {
      const c = d.u8();
      if (c === 0xa0) return d.view8(d.u8());
      if (c === 0xb0) return d.view8(d.u32());
      if (c === 0x40) return undefined;
      return mismatch(def, fd, 'binary', c);
    }
    case 'timestamp': {
      const c = d.u8();
      if (c === 0x83) return new Date(Number(d.i64()));
      if (c === 0x40) return undefined;
      return mismatch(def, fd, 'a timestamp', c);
    }
    case 'fields':
    case 'string-map': {
      const c = d.u8();
      if (c === 0xc1 || c === 0xd1) return readRecord(d, c);
      if (c === 0x40) return undefined;
      return mismatch(def, fd, 'a map', c);
    }
    case '*': {
      const v = d.value();
      return v === null ? undefined : v;
    }
    case 'address': {
      const v = d.value();
      if (v === null) return undefined;
      return v instanceof Typed && v.type === 'symbol' ? v.value : v;
    }
    case 'message-id': {
      const v = d.value();
      if (v === null) return undefined;
      return v instanceof Typed && v.type === 'ulong' ? v.value : v;
    }
    case 'error':
    case 'delivery-state':
    case 'source':
    case 'target':
      return readDescribedField(d, type, def, fd);
  }
}

/** a map read as a Record: symbol and string keys as strings, any other key as String(key) */
export function readRecord(d: Decoder, code: number): Record<string, AmqpValue> {
  d.enter();
  const oldEnd = d.compound(code);
  const count = d.count;
  if (count % 2 !== 0) throw decodeError('map with an odd number of elements');
  const out: Record<string, AmqpValue> = {};
  for (let i = 0; i < count; i += 2) {
    const c = d.buf[d.pos];
    let key: string;
    if (c === 0xa3 || c === 0xa1) {
      d.pos++;
      key = d.utf8(d.u8());
    } else if (c === 0xb3 || c === 0xb1) {
      d.pos++;
      key = d.utf8(d.u32());
    } else {
      const k = d.value();
      key = k instanceof Typed ? String(k.value) : String(k);
    }
    setKey(out, key, d.value());
  }
  d.leave(oldEnd);
  d.depth--;
  return out;
}

const KIND_OF_FIELD: Record<string, string> = {
  error: 'error',
  'delivery-state': 'state',
  source: 'terminus',
  target: 'terminus',
};

function readDescribedField(d: Decoder, type: FieldType, def: CompositeDef, fd?: FieldDef): unknown {
  const c = d.u8();
  if (c === 0x40) return undefined;
  if (c !== 0x00) return mismatch(def, fd, `a described ${type}`, c);
  d.enter();
  const inner = readDescriptor(d);
  if (
    inner === undefined ||
    (inner.kind !== KIND_OF_FIELD[type] && !(type === 'target' && inner === COORDINATOR))
  )
    throw decodeError(`${def.name}.${fd?.specName}: unexpected descriptor for ${type}`);
  if (type === 'source' && inner !== SOURCE) throw decodeError(`${def.name}.source: not a source`);
  if (type === 'target' && inner === SOURCE) throw decodeError(`${def.name}.target: not a target`);
  let out: Obj;
  if (inner.kind === 'state') {
    out = { type: inner.name };
    readCompositeBody(d, inner, out);
  } else {
    out = readCompositeBody(d, inner);
    if (inner === COORDINATOR) out.coordinator = true;
  }
  d.depth--;
  return out;
}

/** read a delivery state value (constructor included); undefined for null */
export function readDeliveryState(d: Decoder): DeliveryState | undefined {
  return readDescribedField(d, 'delivery-state', BY_CODE.get(0x24)!) as DeliveryState | undefined;
}
export function readErrorBody(d: Decoder): AmqpErrorBody | undefined {
  return readDescribedField(d, 'error', ERROR) as AmqpErrorBody | undefined;
}
