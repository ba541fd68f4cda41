/**
 * Fuzz: truncated, bit-flipped, random, size/count-bombed and deeply nested inputs. Only
 * AmqpDecodeError may ever escape a decoder (no RangeError/TypeError, no hang, no stack overflow).
 */
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  AmqpDecodeError,
  decodeComposite,
  decodeFrame,
  decodeMessage,
  decodeValue,
  encodeAmqpFrame,
  encodeMessage,
  encodeSaslFrame,
  encodeValue,
  FrameReader,
  peekMessage,
  splitMessage,
} from '../../src/codec/index.js';
import { seededRandom } from '../../src/common/random.js';
import { message, value } from './arbitraries.js';

const CONSTRUCTORS = [
  0x00, 0x40, 0x45, 0x53, 0x56, 0x70, 0x80, 0x98, 0xa0, 0xa1, 0xa3, 0xb0, 0xb1, 0xb3, 0xc0, 0xc1, 0xd0, 0xd1,
  0xe0, 0xf0,
];

function corpus(): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const v of fc.sample(value, { numRuns: 150, seed: 1 })) out.push(encodeValue(v));
  for (const m of fc.sample(message, { numRuns: 150, seed: 2 })) out.push(encodeMessage(m));
  out.push(
    encodeAmqpFrame(0, {
      type: 'open',
      body: {
        containerId: 'c',
        properties: { 'failover-server-list': [{ 'network-host': 'h', port: 5672 }] },
      },
    }),
    encodeAmqpFrame(1, {
      type: 'attach',
      body: {
        name: 'l',
        handle: 0,
        role: false,
        source: { address: 'q', outcomes: ['amqp:accepted:list'] },
        target: { address: 'q' },
      },
    }),
    encodeAmqpFrame(
      1,
      {
        type: 'transfer',
        body: {
          handle: 0,
          deliveryId: 3,
          deliveryTag: Uint8Array.of(1),
          state: { type: 'transactional-state', txnId: Uint8Array.of(1), outcome: { type: 'accepted' } },
        },
      },
      encodeMessage({ body: 'x' }),
    ),
    encodeAmqpFrame(1, {
      type: 'disposition',
      body: {
        role: true,
        first: 0,
        state: { type: 'rejected', error: { condition: 'amqp:x', info: { a: 1 } } },
      },
    }),
    encodeSaslFrame({
      type: 'sasl-init',
      body: { mechanism: 'PLAIN', initialResponse: Uint8Array.of(0, 97, 0, 98) },
    }),
  );
  return out;
}

const BOMBS: string[] = [
  'f0ffffffffffffffff40', // array32 huge count of nulls, size too large
  'f00000000affffffff40', // array32 huge count, small size
  'e002ff40', // array8 255 zero-width elements in 1 byte
  'f000000005000fffff44', // 1M ulong0 elements
  'd0ffffffffffffffff', // list32 size bomb
  'd00000000a7fffffff40404040', // list32 count bomb
  'd1000000087ffffffe4040', // map32 count bomb
  'b0ffffffff', // vbin32 size bomb
  'b1fffffff0', // str32 size bomb
  'b3000fffff', // sym32 size bomb
  'c1030141', // map with an odd count
  '0000000802000000', // heartbeat frame as a value
  'ffffffff02000000', // frame size bomb
  '0000000801000000', // empty SASL frame
];

function nested(depth: number, open: string): Uint8Array {
  return new Uint8Array(Buffer.from(`${open.repeat(depth)}40`, 'hex'));
}

function mutate(rnd: () => number, src: Uint8Array): Uint8Array {
  const pick = (n: number) => Math.floor(rnd() * n);
  const b = new Uint8Array(src);
  switch (pick(8)) {
    case 0:
      return b.subarray(0, pick(b.length + 1));
    case 1: {
      const flips = 1 + pick(4);
      for (let i = 0; i < flips && b.length > 0; i++) b[pick(b.length)] ^= 1 << pick(8);
      return b;
    }
    case 2:
      return Uint8Array.from({ length: pick(64) }, () => pick(256));
    case 3: {
      // a size/count bomb over random bytes
      if (b.length > 4) {
        const at = pick(b.length - 4);
        const v = [0xffffffff, 0x7fffffff, 0x00100000, 0xffff][pick(4)];
        new DataView(b.buffer).setUint32(at, v);
      }
      return b;
    }
    case 4: {
      if (b.length > 0) b[pick(b.length)] = CONSTRUCTORS[pick(CONSTRUCTORS.length)];
      return b;
    }
    case 5: {
      const bomb = Buffer.from(BOMBS[pick(BOMBS.length)], 'hex');
      const at = pick(b.length + 1);
      return new Uint8Array(Buffer.concat([b.subarray(0, at), bomb, b.subarray(at)]));
    }
    case 6: {
      const opens = [
        'c0ff01',
        'd0ffffffff00000001',
        '00',
        '005300',
        'e0ff01e0',
        'c1ff0240',
        'f0ffffffff00000001f0',
      ];
      return nested(1 + pick(300), opens[pick(opens.length)]);
    }
    default:
      return new Uint8Array(Buffer.concat([b, Uint8Array.from({ length: pick(8) }, () => pick(256))]));
  }
}

function attempt(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof AmqpDecodeError)) throw e;
  }
}

function decodeAll(bytes: Uint8Array, rnd: () => number): void {
  attempt(() => decodeValue(bytes));
  attempt(() => decodeMessage(bytes));
  attempt(() => peekMessage(bytes));
  attempt(() => splitMessage(bytes));
  attempt(() => decodeComposite(bytes));
  // the frame decoder directly (the FrameReader would wrap any other error as a decode error)
  attempt(() => decodeFrame(bytes, 0, bytes.length));
  attempt(() => {
    const r = new FrameReader({ maxFrameSize: 1 << 20 });
    if (rnd() < 0.1) r.expectProtocolHeader();
    let at = 0;
    while (at < bytes.length) {
      const n = 1 + Math.floor(rnd() * bytes.length);
      r.push(bytes.subarray(at, at + n));
      at += n;
      while (r.next() !== undefined) {
        /* drain */
      }
    }
  });
}

describe('fuzz: only AmqpDecodeError escapes', () => {
  const base = corpus();

  it('bombs and deep nesting give decode errors', () => {
    for (const h of BOMBS) {
      expect(() => decodeValue(new Uint8Array(Buffer.from(h, 'hex')))).toThrow(AmqpDecodeError);
    }
    for (const open of ['c0ff01', 'd0ffffffff00000001', '00', 'e0ff01e0']) {
      expect(() => decodeValue(nested(10_000, open))).toThrow(AmqpDecodeError);
    }
    const r = new FrameReader();
    r.push(new Uint8Array(Buffer.from('ffffffff02000000', 'hex')));
    expect(() => r.next()).toThrow(/exceeds max frame size/);
  });

  it('100k mutated inputs (seeded)', () => {
    const seed = Number(process.env.FUZZ_SEED ?? 12345);
    const rnd = seededRandom(seed);
    const CASES = 100_000;
    // stack traces of the ~500k expected decode errors dominate the run time; not needed here
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    onTestFinished(() => {
      Error.stackTraceLimit = limit;
    });
    for (let i = 0; i < CASES; i++) {
      const src = base[Math.floor(rnd() * base.length)];
      const bytes = mutate(rnd, src);
      try {
        decodeAll(bytes, rnd);
      } catch (e) {
        throw new Error(
          `case ${i} (seed ${seed}) input ${Buffer.from(bytes).toString('hex')}: ${String(e)}`,
          { cause: e },
        );
      }
    }
  });
});
