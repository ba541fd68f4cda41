/**
 * fast-check generators of hostile client input: random frames, mutations of a valid
 * conversation, size and count bombs, deep nesting.
 */
import fc from 'fast-check';
import * as S from './script.js';

/** A frame header: SIZE, DOFF, TYPE, channel. */
export function frameHeader(size: number, doff = 2, type = 0, channel = 0): Uint8Array {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(size >>> 0, 0);
  h[4] = doff;
  h[5] = type;
  h.writeUInt16BE(channel, 6);
  return h;
}

/** A whole frame around `body` (sizes consistent). */
export function rawFrame(body: Uint8Array, channel = 0, type = 0): Uint8Array {
  return Buffer.concat([frameHeader(8 + body.length, 2, type, channel), body]);
}

/** Random bytes shaped like frames often enough to get past the size check. */
export const randomFrames: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 600 }),
  fc
    .tuple(
      fc.uint8Array({ minLength: 0, maxLength: 300 }),
      fc.nat({ max: 3 }),
      fc.constantFrom(0, 1, 2, 0xff),
      fc.nat({ max: 0xffff }),
    )
    .map(([body, extra, type, ch]) => {
      const doff = 2 + extra;
      const pad = Buffer.alloc((doff - 2) * 4);
      return Buffer.concat([frameHeader(8 + pad.length + body.length, doff, type, ch), pad, body]);
    }),
  // a described performative code with random fields after it
  fc
    .tuple(fc.integer({ min: 0x10, max: 0x18 }), fc.uint8Array({ minLength: 0, maxLength: 200 }))
    .map(([code, rest]) => rawFrame(Buffer.concat([Buffer.from([0x00, 0x53, code]), rest]))),
);

/** Where the hostile bytes go: right after a bare AMQP header, after Open, or after Begin. */
export type Stage = 'header' | 'open' | 'begin';
export const stage: fc.Arbitrary<Stage> = fc.constantFrom('header', 'open', 'begin');

export function prefixFor(s: Stage): Uint8Array {
  if (s === 'header') return S.AMQP_HEADER;
  if (s === 'open') return S.concat([S.AMQP_HEADER, S.open()]);
  return S.concat(S.openedSession());
}

/** One mutation of a byte string. */
export type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; value: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'duplicate'; at: number; len: number }
  | { kind: 'size'; at: number; value: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat({ max: 7 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      at: fc.nat(),
      value: fc.constantFrom(0x00, 0x40, 0x45, 0x7f, 0x80, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0xff),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('delete' as const),
      at: fc.nat(),
      len: fc.integer({ min: 1, max: 16 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('duplicate' as const),
      at: fc.nat(),
      len: fc.integer({ min: 1, max: 64 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('size' as const),
      at: fc.nat(),
      value: fc.oneof(
        fc.constantFrom(0, 1, 7, 8, 0x7fffffff, 0xffffffff, 0x10000, 513),
        fc.nat({ max: 0xffffffff }),
      ),
    }),
  },
);

/** Applies `m` (positions taken modulo the length). */
export function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const n = bytes.length;
  if (n === 0) return bytes;
  const at = m.at % n;
  const b = Buffer.from(bytes);
  switch (m.kind) {
    case 'flip':
      b[at] = b[at]! ^ (1 << m.bit);
      return b;
    case 'set':
      b[at] = m.value;
      return b;
    case 'truncate':
      return b.subarray(0, at);
    case 'delete':
      return Buffer.concat([b.subarray(0, at), b.subarray(at + m.len)]);
    case 'insert':
      return Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
    case 'duplicate':
      return Buffer.concat([b.subarray(0, at + m.len), b.subarray(at)]);
    case 'size':
      if (n >= 4) b.writeUInt32BE(m.value >>> 0, Math.min(at, n - 4));
      return b;
  }
}

/** Reorders frames: swap two whole frames of a step (a field swap at frame granularity). */
export const swap = fc.tuple(fc.nat(), fc.nat());

// ---- size and count bombs ----

/** A described performative whose first field is `value`, wrapped in a frame on channel 0. */
function performativeWith(code: number, value: Uint8Array): Uint8Array {
  // list8 with one field: the hostile value
  const list = Buffer.concat([Buffer.from([0xc0, Math.min(255, value.length + 1), 1]), value]);
  if (value.length + 1 > 255) {
    const l32 = Buffer.alloc(9);
    l32[0] = 0xd0;
    l32.writeUInt32BE(value.length + 4, 1);
    l32.writeUInt32BE(1, 5);
    return rawFrame(Buffer.concat([Buffer.from([0x00, 0x53, code]), l32, value]));
  }
  return rawFrame(Buffer.concat([Buffer.from([0x00, 0x53, code]), list]));
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

const bigCount = fc.oneof(
  fc.constantFrom(0xffffffff, 0x7fffffff, 0x10000000, 1_000_000_000, 65_536),
  fc.integer({ min: 256, max: 0xffffffff }),
);

export type Bomb = { name: string; bytes: Uint8Array; conditions: readonly string[] };

/** Compound and array values claiming far more elements or bytes than the frame holds. */
export const countBomb: fc.Arbitrary<Bomb> = fc
  .tuple(
    fc.constantFrom('list32', 'map32', 'array32', 'array32-null', 'list8', 'vbin32', 'str32', 'sym32'),
    bigCount,
    fc.constantFrom(0x10, 0x11, 0x12, 0x13, 0x14, 0x15),
    fc.uint8Array({ maxLength: 16 }),
  )
  .map(([kind, count, code, tail]) => {
    let value: Buffer;
    switch (kind) {
      case 'list32':
        value = Buffer.concat([Buffer.from([0xd0]), u32(4 + tail.length), u32(count), tail]);
        break;
      case 'map32':
        value = Buffer.concat([Buffer.from([0xd1]), u32(4 + tail.length), u32(count), tail]);
        break;
      case 'array32':
        value = Buffer.concat([
          Buffer.from([0xf0]),
          u32(5 + tail.length),
          u32(count),
          Buffer.from([0x71]),
          tail,
        ]);
        break;
      case 'array32-null':
        // zero-width elements: a count check against the remaining bytes alone passes any count
        value = Buffer.concat([Buffer.from([0xf0]), u32(5), u32(count), Buffer.from([0x40])]);
        break;
      case 'list8':
        value = Buffer.concat([Buffer.from([0xc0, 1 + tail.length, count & 0xff]), tail]);
        break;
      default: {
        const c = kind === 'vbin32' ? 0xb0 : kind === 'str32' ? 0xb1 : 0xb3;
        value = Buffer.concat([Buffer.from([c]), u32(count), tail]);
      }
    }
    return {
      name: `${kind} count ${count} in 0x${code.toString(16)}`,
      bytes: performativeWith(code, value),
      conditions: ['amqp:decode-error'],
    };
  });

/** Lists / described values / arrays of arrays nested far deeper than any real frame. */
export const deepBomb: fc.Arbitrary<Bomb> = fc
  .tuple(fc.constantFrom('list', 'described', 'array'), fc.integer({ min: 65, max: 3000 }))
  .map(([kind, depth]) => {
    // built in one buffer (concatenating level by level would copy O(depth^2) bytes)
    const level = kind === 'described' ? 3 : 9;
    const inner = Buffer.alloc(depth * level + 1);
    for (let i = 0; i < depth; i++) {
      const at = i * level;
      if (kind === 'described') inner.set([0x00, 0x53, 0x70], at);
      else {
        inner[at] = kind === 'list' ? 0xd0 : 0xf0;
        // size counts the count field and everything nested inside
        inner.writeUInt32BE(inner.length - at - 5, at + 1);
        inner.writeUInt32BE(1, at + 5);
      }
    }
    inner[inner.length - 1] = 0x40;
    return {
      name: `${kind} nested ${depth} deep`,
      bytes: performativeWith(0x10, inner),
      conditions: ['amqp:decode-error', 'amqp:connection:framing-error'],
    };
  });

/** A frame SIZE larger than the frame limit (or nonsense), with a few body bytes. */
export const sizeBomb: fc.Arbitrary<Bomb> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(0xffffffff, 0x80000000, 1024 * 1024 + 1),
      fc.integer({ min: 1024 * 1024 + 1, max: 0xffffffff }),
    ),
    fc.uint8Array({ maxLength: 32 }),
  )
  .map(([size, body]) => ({
    name: `SIZE ${size}`,
    bytes: Buffer.concat([frameHeader(size), body]),
    conditions: ['amqp:connection:framing-error'],
  }));

/** Malformed frame headers: SIZE < 8, DOFF < 2, SIZE < DOFF * 4, unknown frame type. */
export const badHeader: fc.Arbitrary<Bomb> = fc
  .oneof(
    fc.nat({ max: 7 }).map((size) => ({ name: `SIZE ${size}`, h: frameHeader(size) })),
    fc.constantFrom(0, 1).map((doff) => ({ name: `DOFF ${doff}`, h: frameHeader(16, doff) })),
    fc
      .integer({ min: 5, max: 255 })
      .map((doff) => ({ name: `DOFF ${doff} > SIZE`, h: frameHeader(16, doff) })),
  )
  .map(({ name, h }) => ({
    name,
    bytes: Buffer.concat([h, Buffer.alloc(8)]),
    conditions: ['amqp:connection:framing-error'],
  }));
