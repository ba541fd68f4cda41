/**
 * The AMQP value model: how AMQP typed values appear in JavaScript.
 *
 * Encoding a plain JS value picks a default AMQP type:
 *   null/undefined -> null; boolean -> boolean; string -> string (str8/str32);
 *   number: integer within int32 -> int (smallint when it fits), other safe integer -> long,
 *           anything else (fractions, NaN, +-Infinity, -0) -> double;
 *   bigint -> long (error if outside int64; use ulong() for larger);
 *   Uint8Array (incl. Buffer) -> binary; Date -> timestamp; Array -> list;
 *   Map -> map (keys any value); plain object -> map with string keys;
 *   a Typed wrapper -> exactly its type.
 *
 * Decoding returns the plain JS value whenever re-encoding that plain value gives back the same
 * AMQP type, and a Typed wrapper otherwise; so every decoded value re-encodes to the same type
 * (and, in canonical compact form, the same bytes). E.g. int -> number; double 1.5 -> number but
 * double 3.0 -> Typed('double', 3); long outside int32 -> number (bigint beyond 2^53) but a long
 * within int32 -> Typed('long', n); symbol -> Typed('symbol', 'x'); ubyte -> Typed('ubyte', n);
 * a map whose keys are all strings (str) -> plain object, any other map -> Map.
 */

export type AmqpTypeName =
  | 'null'
  | 'boolean'
  | 'ubyte'
  | 'ushort'
  | 'uint'
  | 'ulong'
  | 'byte'
  | 'short'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'decimal32'
  | 'decimal64'
  | 'decimal128'
  | 'char'
  | 'timestamp'
  | 'uuid'
  | 'binary'
  | 'string'
  | 'symbol'
  | 'list'
  | 'map'
  | 'array'
  | 'described';

/** Implemented as a class in the codec (see `Typed` export); this is its public shape. */
export interface TypedValue {
  /** The AMQP type name. */
  readonly type: AmqpTypeName;
  /** The value, as carried for that type. */
  readonly value: unknown;
}

/** Any value the codec encodes: plain JavaScript values map to default AMQP types (above), {@link TypedValue} says the type. */
export type AmqpValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | Date
  | TypedValue
  | AmqpValue[]
  | Map<AmqpValue, AmqpValue>
  | { [key: string]: AmqpValue };
