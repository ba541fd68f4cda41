/**
 * `Typed`: an AMQP value whose type the plain JS default mapping would not reproduce (see
 * values.ts), plus one constructor helper per AMQP type.
 *
 * Value carried per type: integers as number (long/ulong: number or bigint), float/double as
 * number, char as a one-code-point string, uuid as a lowercase canonical string, decimals as their
 * raw big-endian bytes (4/8/16), symbol as string, timestamp as Date, binary as Uint8Array.
 * Arrays carry the elements as values of `elementType` (bare values or Typed of that type; arrays
 * of arrays hold Typed arrays) and, for arrays of described elements, the shared `descriptor`.
 */
import { AmqpEncodeError } from '../errors.js';
import type { AmqpTypeName, AmqpValue, TypedValue } from './values.js';

/** An AMQP value with its type said explicitly; made by the helpers below (`ulong(1)`, `symbol('x')`, ...). */
export class Typed implements TypedValue {
  /** The AMQP type name. */
  readonly type: AmqpTypeName;
  /** The value, as carried for that type (see the file comment of values.ts). */
  readonly value: unknown;
  /** described values: the descriptor; arrays of described elements: the shared descriptor */
  declare readonly descriptor?: AmqpValue;
  /** arrays only: the AMQP type of every element (for described arrays, the type inside) */
  declare readonly elementType?: AmqpTypeName;

  constructor(type: AmqpTypeName, value: unknown, descriptor?: AmqpValue, elementType?: AmqpTypeName) {
    this.type = type;
    this.value = value;
    if (descriptor !== undefined) this.descriptor = descriptor;
    if (elementType !== undefined) this.elementType = elementType;
  }
}

/** True if `v` is a {@link Typed} value. */
export function isTyped(v: unknown): v is Typed {
  return v instanceof Typed;
}

function checkInt(type: AmqpTypeName, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) throw new AmqpEncodeError(`${type} out of range: ${v}`);
  return v;
}

/** An AMQP ubyte (0..255); throws {@link AmqpEncodeError} out of range. */
export const ubyte = (v: number): Typed => new Typed('ubyte', checkInt('ubyte', v, 0, 0xff));
/** An AMQP ushort (0..65535); throws {@link AmqpEncodeError} out of range. */
export const ushort = (v: number): Typed => new Typed('ushort', checkInt('ushort', v, 0, 0xffff));
/** An AMQP uint (0..2^32-1); throws {@link AmqpEncodeError} out of range. */
export const uint = (v: number): Typed => new Typed('uint', checkInt('uint', v, 0, 0xffffffff));
/** An AMQP byte (-128..127); throws {@link AmqpEncodeError} out of range. */
export const byte = (v: number): Typed => new Typed('byte', checkInt('byte', v, -0x80, 0x7f));
/** An AMQP short (-32768..32767); throws {@link AmqpEncodeError} out of range. */
export const short = (v: number): Typed => new Typed('short', checkInt('short', v, -0x8000, 0x7fff));
/** An AMQP int (32-bit signed); throws {@link AmqpEncodeError} out of range. */
export const int = (v: number): Typed => new Typed('int', checkInt('int', v, -0x80000000, 0x7fffffff));

/** A ulong: a non-negative safe integer number, or a bigint below 2^64. */
export function ulong(v: number | bigint): Typed {
  if (typeof v === 'bigint') {
    if (v < 0n || v > 0xffffffffffffffffn) throw new AmqpEncodeError(`ulong out of range: ${v}`);
    return new Typed('ulong', v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
  }
  if (!Number.isSafeInteger(v) || v < 0) throw new AmqpEncodeError(`ulong out of range: ${v}`);
  return new Typed('ulong', v);
}
/** A long: a safe integer number, or a bigint within int64. */
export function long(v: number | bigint): Typed {
  if (typeof v === 'bigint') {
    if (v < -0x8000000000000000n || v > 0x7fffffffffffffffn)
      throw new AmqpEncodeError(`long out of range: ${v}`);
    return new Typed('long', Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === v ? Number(v) : v);
  }
  if (!Number.isSafeInteger(v)) throw new AmqpEncodeError(`long out of range: ${v}`);
  return new Typed('long', v);
}
/** An AMQP float (32-bit IEEE 754). */
export const float = (v: number): Typed => new Typed('float', v);
/** An AMQP double (64-bit IEEE 754), e.g. for an integral number that must stay a double. */
export const double = (v: number): Typed => new Typed('double', v);
/** An AMQP boolean. */
export const boolean = (v: boolean): Typed => new Typed('boolean', v);
/** An AMQP string (UTF-8). */
export const string = (v: string): Typed => new Typed('string', v);
/** An AMQP symbol (ASCII name, as used for conditions, capabilities and annotation keys). */
export const symbol = (v: string): Typed => new Typed('symbol', v);
/** AMQP binary, e.g. to send bytes inside an amqp-value body rather than as a data section. */
export const binary = (v: Uint8Array): Typed => new Typed('binary', v);
/** An AMQP timestamp (ms since the epoch), from a Date or a number. */
export const timestamp = (v: Date | number): Typed =>
  new Typed('timestamp', typeof v === 'number' ? new Date(v) : v);
/** An AMQP list. */
export const list = (v: AmqpValue[]): Typed => new Typed('list', v);
/** An AMQP map; a Map keeps non-string keys. */
export const map = (v: Map<AmqpValue, AmqpValue> | { [key: string]: AmqpValue }): Typed =>
  new Typed('map', v);

/** A char: one Unicode code point, given as a string or a code point number. */
export function char(v: string | number): Typed {
  const s = typeof v === 'number' ? String.fromCodePoint(v) : v;
  const cp = s.codePointAt(0);
  if (cp === undefined || s.length !== (cp > 0xffff ? 2 : 1))
    throw new AmqpEncodeError('char must be one code point');
  return new Typed('char', s);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A uuid from its canonical string or its 16 bytes; carried as the lowercase canonical string. */
export function uuid(v: string | Uint8Array): Typed {
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (!UUID_RE.test(s)) throw new AmqpEncodeError(`not a uuid: ${v}`);
    return new Typed('uuid', s);
  }
  if (v.length !== 16) throw new AmqpEncodeError('uuid needs 16 bytes');
  return new Typed('uuid', uuidToString(v, 0));
}

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, '0'));
export function uuidToString(b: Uint8Array, o: number): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[b[o + i]];
  }
  return s;
}

function decimal(type: AmqpTypeName, width: number, v: Uint8Array): Typed {
  if (v.length !== width) throw new AmqpEncodeError(`${type} needs ${width} raw bytes`);
  return new Typed(type, v);
}
/** An AMQP decimal32 from its 4 raw big-endian bytes. */
export const decimal32 = (v: Uint8Array): Typed => decimal('decimal32', 4, v);
/** An AMQP decimal64 from its 8 raw big-endian bytes. */
export const decimal64 = (v: Uint8Array): Typed => decimal('decimal64', 8, v);
/** An AMQP decimal128 from its 16 raw big-endian bytes. */
export const decimal128 = (v: Uint8Array): Typed => decimal('decimal128', 16, v);

/** A described value: descriptor (usually ulong(code) or symbol(name)) and the value it describes. */
export const described = (descriptor: AmqpValue, value: AmqpValue): Typed =>
  new Typed('described', value, descriptor);

/**
 * An array: every element has `elementType`. For arrays of described values pass the shared
 * `descriptor`; `elementType` is then the type of the values inside the descriptor.
 */
export const array = (elementType: AmqpTypeName, values: unknown[], descriptor?: AmqpValue): Typed =>
  new Typed('array', values, descriptor, elementType);
