/**
 * fast-check arbitraries for the value model (in the decoded shape: decodeValue(encodeValue(v))
 * deep-equals v), composites (derived from the field tables) and messages.
 */
import fc from 'fast-check';
import type { CompositeDef, FieldDef, FieldType } from '../../src/codec/composites.js';
import type { DeliveryState } from '../../src/codec/contract.js';
import type { Message } from '../../src/codec/message.js';
import { Typed } from '../../src/codec/typed.js';
import type { AmqpTypeName, AmqpValue } from '../../src/codec/values.js';

const u8 = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
export const text = fc.string({ unit: 'binary', maxLength: 40 });
const longText = fc.string({ unit: 'binary', minLength: 200, maxLength: 400 });
export const anyText = fc.oneof({ weight: 9, arbitrary: text }, { weight: 1, arbitrary: longText });
export const ascii = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz:-_.0123456789'),
  maxLength: 30,
});
const date = fc.integer({ min: -8.64e15, max: 8.64e15 }).map((t) => new Date(t));
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const num64 = (b: bigint): number | bigint =>
  b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
const uuidStr = u8(16).map((b) =>
  Buffer.from(b)
    .toString('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'),
);
const binary = fc.oneof(
  { weight: 9, arbitrary: fc.uint8Array({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 256, maxLength: 300 }) },
);

/** raw element values per array element type (the shape decode gives inside Typed arrays) */
export const rawOf: Partial<Record<AmqpTypeName, fc.Arbitrary<unknown>>> = {
  boolean: fc.boolean(),
  ubyte: fc.integer({ min: 0, max: 255 }),
  ushort: fc.integer({ min: 0, max: 0xffff }),
  uint: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 0xffffffff })),
  ulong: fc.oneof(fc.integer({ min: 0, max: 255 }), uint64.map(num64)),
  byte: fc.integer({ min: -128, max: 127 }),
  short: fc.integer({ min: -0x8000, max: 0x7fff }),
  int: fc.oneof(fc.integer({ min: -128, max: 127 }), fc.integer({ min: -0x80000000, max: 0x7fffffff })),
  long: fc.oneof(fc.integer({ min: -128, max: 127 }), int64.map(num64)),
  float: fc.float({ noNaN: false }).map((x) => Math.fround(x)),
  double: fc.double(),
  decimal32: u8(4),
  decimal64: u8(8),
  decimal128: u8(16),
  char: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  timestamp: date,
  uuid: uuidStr,
  binary,
  string: anyText,
  symbol: ascii,
};

const scalar: fc.Arbitrary<AmqpValue> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  fc.double().filter((x) => !Number.isSafeInteger(x) || Object.is(x, -0)),
  fc.oneof(
    fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -(2 ** 31) - 1 }),
  ),
  int64.filter((b) => b > BigInt(Number.MAX_SAFE_INTEGER) || b < BigInt(Number.MIN_SAFE_INTEGER)),
  fc.integer({ min: -0x80000000, max: 0x7fffffff }).map((n) => new Typed('long', n)),
  fc.integer({ min: -(2 ** 52), max: 2 ** 52 }).map((n) => new Typed('double', n)),
  anyText,
  binary,
  date,
  ...(
    [
      'ubyte',
      'ushort',
      'uint',
      'ulong',
      'byte',
      'short',
      'float',
      'decimal32',
      'decimal64',
      'decimal128',
      'char',
      'uuid',
      'symbol',
    ] as const
  ).map((t) => (rawOf[t] as fc.Arbitrary<unknown>).map((v) => new Typed(t, v) as AmqpValue)),
);

const ELEMENT_TYPES = Object.keys(rawOf) as AmqpTypeName[];

export const value: fc.Arbitrary<AmqpValue> = fc.letrec<{ v: AmqpValue; arr: Typed }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: scalar },
    fc.array(tie('v'), { maxLength: 6 }),
    fc.dictionary(anyText, tie('v'), { maxKeys: 5 }),
    fc
      .array(fc.tuple(fc.oneof(tie('v'), fc.integer()), tie('v')), { maxLength: 4 })
      .map((es) => new Map<AmqpValue, AmqpValue>([[0, null], ...es])),
    tie('arr'),
    fc
      .tuple(
        fc.oneof(
          rawOf.ulong!.map((u) => new Typed('ulong', u)),
          ascii.map((s) => new Typed('symbol', s)),
        ),
        tie('v'),
      )
      .map(([d, v]) => new Typed('described', v, d as AmqpValue)),
  ),
  arr: fc.oneof(
    { depthSize: 'small' },
    fc
      .constantFrom(...ELEMENT_TYPES)
      .chain((t) =>
        fc
          .array(rawOf[t] as fc.Arbitrary<unknown>, { maxLength: 6 })
          .map((vs) => new Typed('array', vs, undefined, t)),
      ),
    fc
      .array(fc.array(tie('v'), { maxLength: 3 }), { maxLength: 3 })
      .map((vs) => new Typed('array', vs, undefined, 'list')),
    fc
      .array(fc.dictionary(text, tie('v'), { maxKeys: 3 }), { maxLength: 3 })
      .map((vs) => new Typed('array', vs, undefined, 'map')),
    fc.array(tie('arr'), { maxLength: 3 }).map((vs) => new Typed('array', vs, undefined, 'array')),
    fc
      .tuple(rawOf.ulong!, fc.array(fc.array(tie('v'), { maxLength: 3 }), { maxLength: 3 }))
      .map(([d, vs]) => new Typed('array', vs, new Typed('ulong', d), 'list')),
  ),
})).v;

const fieldsMap = fc.dictionary(
  ascii,
  value.filter((v) => v !== null),
  { maxKeys: 4 },
);
export const errorBody = fc.record(
  { condition: ascii, description: text, info: fieldsMap },
  { requiredKeys: ['condition'] },
);
export const deliveryState: fc.Arbitrary<DeliveryState> = fc.letrec<{ s: DeliveryState }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small' },
    fc.record({
      type: fc.constant('received' as const),
      sectionNumber: fc.nat(0xffffffff),
      sectionOffset: fc.nat(),
    }),
    fc.constant({ type: 'accepted' as const }),
    fc.record({ type: fc.constant('rejected' as const), error: errorBody }, { requiredKeys: ['type'] }),
    fc.constant({ type: 'released' as const }),
    fc.record(
      {
        type: fc.constant('modified' as const),
        deliveryFailed: fc.boolean(),
        undeliverableHere: fc.boolean(),
        messageAnnotations: fieldsMap,
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('declared' as const), txnId: binary }),
    fc.record(
      { type: fc.constant('transactional-state' as const), txnId: binary, outcome: tie('s') },
      { requiredKeys: ['type', 'txnId'] },
    ),
  ),
})).s;

function fieldArb(fd: FieldDef, defs: Map<string, CompositeDef>): fc.Arbitrary<unknown> {
  const t: FieldType = fd.type;
  const one = (): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'boolean':
        return fc.boolean();
      case 'ubyte':
        return fc.integer({ min: 0, max: 255 });
      case 'ushort':
        return fc.integer({ min: 0, max: 0xffff });
      case 'uint':
        return fc.oneof(fc.integer({ min: 0, max: 300 }), fc.nat(0xffffffff));
      case 'ulong':
        return fc.oneof(fc.integer({ min: 0, max: 300 }), fc.nat({ max: Number.MAX_SAFE_INTEGER }));
      case 'string':
      case 'address':
        return anyText;
      case 'symbol':
        return ascii;
      case 'binary':
        return binary;
      case 'timestamp':
        return date;
      case 'fields':
      case 'string-map':
        return fieldsMap;
      case '*':
        return value.filter((v) => v !== null);
      case 'message-id':
        return fc.oneof(
          text,
          fc.nat(),
          uuidStr.map((s) => new Typed('uuid', s)),
          binary,
        );
      case 'error':
        return errorBody;
      case 'delivery-state':
        return deliveryState;
      case 'source':
        return compositeArb(defs.get('source')!, defs);
      case 'target':
        return fc.oneof(
          compositeArb(defs.get('target')!, defs),
          compositeArb(defs.get('coordinator')!, defs).map((c) => ({ ...c, coordinator: true })),
        );
    }
  };
  return fd.multiple ? fc.array(one(), { maxLength: 4 }) : one();
}

/** a body for a composite from its field table: mandatory fields always, others optional */
export function compositeArb(
  def: CompositeDef,
  defs: Map<string, CompositeDef>,
): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const fd of def.fields) model[fd.name] = fieldArb(fd, defs);
  return fc.record(model, {
    requiredKeys: def.fields.filter((f) => f.mandatory).map((f) => f.name),
  }) as fc.Arbitrary<Record<string, unknown>>;
}

const messageId = fc.oneof(
  text,
  fc.nat(),
  uint64.filter((b) => b > BigInt(Number.MAX_SAFE_INTEGER)),
  uuidStr.map((s) => new Typed('uuid', s)),
  binary,
);
const annotations = fc.dictionary(ascii, value, { maxKeys: 4 });

export const message: fc.Arbitrary<Message> = fc
  .tuple(
    fc.record(
      {
        durable: fc.boolean(),
        priority: fc.integer({ min: 0, max: 255 }),
        ttl: fc.nat(0xffffffff),
        firstAcquirer: fc.boolean(),
        deliveryCount: fc.nat(0xffffffff),
        deliveryAnnotations: annotations,
        messageAnnotations: annotations,
        messageId,
        userId: binary,
        to: text,
        subject: text,
        replyTo: text,
        correlationId: messageId,
        contentType: ascii,
        contentEncoding: ascii,
        absoluteExpiryTime: date,
        creationTime: date,
        groupId: text,
        groupSequence: fc.nat(0xffffffff),
        replyToGroupId: text,
        applicationProperties: fc.dictionary(text, value, { maxKeys: 4 }),
        footer: annotations,
      },
      { requiredKeys: [] },
    ),
    fc.oneof(
      fc.constant({}),
      binary.map((body) => ({ body })),
      value.filter((v) => !(v instanceof Uint8Array)).map((body) => ({ body })),
      fc.array(binary, { minLength: 2, maxLength: 4 }).map((body) => ({ body, bodyType: 'data' as const })),
      binary.map((body) => ({ body, bodyType: 'value' as const })),
      fc
        .array(fc.array(value, { maxLength: 4 }), { minLength: 1, maxLength: 3 })
        .map((body) => ({ body, bodyType: 'sequence' as const })),
    ),
  )
  .map(([m, b]) => ({ ...m, ...b }) as Message);
