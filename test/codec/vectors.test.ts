/** Byte-exact vectors for every constructor code (expected bytes written by hand from part 1). */
import { describe, expect, it } from 'vitest';
import {
  AmqpDecodeError,
  array,
  byte,
  char,
  decimal32,
  decimal64,
  decimal128,
  decodeDeliveryState,
  decodeValue,
  described,
  double,
  encodeAmqpFrame,
  encodeDeliveryState,
  encodeHeartbeat,
  encodeMessage,
  encodeProtocolHeader,
  encodeSaslFrame,
  encodeValue,
  float,
  long,
  parseProtocolHeader,
  short,
  symbol,
  Typed,
  ubyte,
  uint,
  ulong,
  ushort,
  uuid,
} from '../../src/codec/index.js';
import type { AmqpValue } from '../../src/codec/values.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
const rep = (s: string, n: number) => s.repeat(n);

// [description, value, canonical encoding]: encode(value) === bytes and decode(bytes) equals value
const CANONICAL: [string, AmqpValue, string][] = [
  ['0x40 null', null, '40'],
  ['0x41 true', true, '41'],
  ['0x42 false', false, '42'],
  ['0x50 ubyte', ubyte(255), '50ff'],
  ['0x60 ushort', ushort(0x1234), '601234'],
  ['0x43 uint0', uint(0), '43'],
  ['0x52 smalluint', uint(7), '5207'],
  ['0x70 uint', uint(0xdeadbeef), '70deadbeef'],
  ['0x44 ulong0', ulong(0), '44'],
  ['0x53 smallulong', ulong(255), '53ff'],
  ['0x80 ulong', ulong(256), '800000000000000100'],
  ['0x80 ulong max (bigint)', ulong(2n ** 64n - 1n), '80ffffffffffffffff'],
  ['0x51 byte', byte(-2), '51fe'],
  ['0x61 short', short(-2), '61fffe'],
  ['0x54 smallint', -128, '5480'],
  ['0x71 int', 0x7fffffff, '717fffffff'],
  ['0x71 int negative', -129, '71ffffff7f'],
  ['0x55 smalllong', long(-1), '55ff'],
  ['0x81 long (Typed, within int32)', long(1000), '81' + '00000000000003e8'],
  ['0x81 long (plain number beyond int32)', 2 ** 40, '810000010000000000'],
  ['0x81 long min (bigint)', -(2n ** 63n), '818000000000000000'],
  ['0x72 float', float(1.5), '723fc00000'],
  ['0x82 double', 1.5, '823ff8000000000000'],
  ['0x82 double (Typed, integral)', double(3), '824008000000000000'],
  ['0x82 double NaN', Number.NaN, '827ff8000000000000'],
  ['0x74 decimal32', decimal32(bytes('22500001')), '7422500001'],
  ['0x84 decimal64', decimal64(bytes('2238000000000001')), '842238000000000001'],
  ['0x94 decimal128', decimal128(bytes(rep('01', 16))), `94${rep('01', 16)}`],
  ['0x73 char', char('a'), '7300000061'],
  ['0x73 char astral', char('😀'), '730001f600'],
  ['0x83 timestamp', new Date(1), '830000000000000001'],
  ['0x83 timestamp negative', new Date(-1), '83ffffffffffffffff'],
  ['0x98 uuid', uuid('01234567-89ab-cdef-0123-456789abcdef'), '980123456789abcdef0123456789abcdef'],
  ['0xa0 vbin8', bytes('0102'), 'a0020102'],
  ['0xb0 vbin32', bytes(rep('ab', 300)), `b00000012c${rep('ab', 300)}`],
  ['0xa1 str8', 'hi', 'a1026869'],
  ['0xa1 str8 utf-8', 'é', 'a102c3a9'],
  ['0xb1 str32', 'x'.repeat(256), `b100000100${rep('78', 256)}`],
  ['0xa3 sym8', symbol('ab'), 'a3026162'],
  ['0xb3 sym32', symbol('y'.repeat(300)), `b30000012c${rep('79', 300)}`],
  ['0x45 list0', [], '45'],
  ['0xc0 list8', [1, 'a', null], 'c007035401a1016140'],
  ['0xd0 list32', new Array(300).fill(null), `d0000001300000012c${rep('40', 300)}`],
  ['0xc1 map8', { a: 1 }, 'c10602a101615401'],
  ['0xc1 map8 empty', {}, 'c10100'],
  ['0xc1 map8 non-string keys', new Map<AmqpValue, AmqpValue>([[1, true]]), 'c104025401' + '41'],
  ['0xd1 map32', { k: 'v'.repeat(260) }, `d10000011000000002a1016bb100000104${rep('76', 260)}`],
  ['0xe0 array8 of sym8', array('symbol', ['a', 'bc']), 'e00702a3016102' + '6263'],
  ['0xe0 array8 of smalluint', array('uint', [1, 2]), 'e0040252' + '0102'],
  ['0xe0 array8 of uint', array('uint', [1, 256]), 'e00a0270' + '00000001' + '00000100'],
  ['0xe0 array8 of boolean', array('boolean', [true, false]), 'e00402560100'],
  ['0xe0 array8 of long', array('long', [1000]), 'e00a0181' + '00000000000003e8'],
  [
    '0xe0 array of arrays',
    array('array', [array('int', [1, 2])]),
    'e00d01f0' + '00000007' + '00000002' + '540102',
  ],
  [
    '0xe0 array of described lists',
    array('list', [[1], []], ulong(5)),
    'e0' + '17' + '02' + '005305' + 'd0' + '00000006' + '00000001' + '5401' + '00000004' + '00000000',
  ],
  ['0xf0 array32', array('ubyte', new Array(300).fill(7)), `f0000001310000012c50${rep('07', 300)}`],
  ['0x00 described (ulong descriptor)', described(ulong(0x77), 'x'), '005377a10178'],
  [
    '0x00 described (symbol descriptor)',
    described(symbol('a:b'), 1),
    '00a3036103a625401'.replace('6103a62', '613a62'),
  ],
];

describe('byte-exact vectors', () => {
  for (const [name, value, expected] of CANONICAL) {
    it(`encodes ${name}`, () => {
      expect(hex(encodeValue(value))).toBe(expected);
    });
    it(`decodes ${name}`, () => {
      expect(decodeValue(bytes(expected))).toEqual(value);
    });
  }

  // non-canonical forms a peer may send: decode only
  const DECODE_ONLY: [string, string, AmqpValue][] = [
    ['0x56 boolean true', '5601', true],
    ['0x56 boolean false', '5600', false],
    ['0x70 uint with small value', '7000000005', uint(5)],
    ['0x80 ulong with small value', '800000000000000005', ulong(5)],
    ['0x71 int with small value', '7100000005', 5],
    ['0xd0 list32 small', 'd0000000060000000154' + '01', [1]],
    ['0xd1 map32 small', 'd1000000060000000241' + '42', new Map<AmqpValue, AmqpValue>([[true, false]])],
    ['0xb1 str32 small', 'b1000000026869', 'hi'],
    ['0xb0 vbin32 small', 'b00000000101', bytes('01')],
    ['0xf0 array32 small', 'f0000000060000000152' + '07', array('uint', [7])],
  ];
  for (const [name, h, expected] of DECODE_ONLY) {
    it(`decodes ${name}`, () => {
      expect(decodeValue(bytes(h))).toEqual(expected);
    });
  }

  it('plain JS defaults: small integer -> smallint, Date -> timestamp, bigint -> long', () => {
    expect(hex(encodeValue(5))).toBe('5405');
    expect(hex(encodeValue(2n ** 62n))).toBe('814000000000000000');
    expect(hex(encodeValue(-0))).toBe('828000000000000000');
    expect(hex(encodeValue(0.5))).toBe('823fe0000000000000');
  });

  it('decoding picks plain JS only when it re-encodes to the same type', () => {
    expect(decodeValue(bytes('824008000000000000'))).toEqual(new Typed('double', 3));
    expect(decodeValue(bytes('5505'))).toEqual(new Typed('long', 5));
    expect(decodeValue(bytes('817fffffffffffffff'))).toBe(2n ** 63n - 1n);
    expect(decodeValue(bytes('c10602a301615401'))).toEqual(new Map<AmqpValue, AmqpValue>([[symbol('a'), 1]]));
  });

  it('frames: open, flow, transfer with payload, heartbeat, sasl-init, protocol headers', () => {
    expect(hex(encodeAmqpFrame(0, { type: 'open', body: { containerId: 'c' } }))).toBe(
      '00000011' + '02000000' + '005310c00401a10163',
    );
    expect(
      hex(
        encodeAmqpFrame(1, {
          type: 'flow',
          body: { incomingWindow: 5, nextOutgoingId: 0, outgoingWindow: 2 },
        }),
      ),
    ).toBe('00000014' + '02000001' + '005313c00704' + '40' + '5205' + '43' + '5202');
    expect(
      hex(
        encodeAmqpFrame(
          2,
          { type: 'transfer', body: { handle: 0, deliveryId: 1, deliveryTag: bytes('aa'), settled: true } },
          bytes('0102'),
        ),
      ),
    ).toBe('00000018' + '02000002' + '005314c00905' + '43' + '5201' + 'a001aa' + '40' + '41' + '0102');
    expect(hex(encodeHeartbeat())).toBe('0000000802000000');
    expect(hex(encodeSaslFrame({ type: 'sasl-init', body: { mechanism: 'PLAIN' } }))).toBe(
      '00000015' + '02010000' + '005341c00801a305504c41494e',
    );
    expect(hex(encodeProtocolHeader(3))).toBe('414d515003010000');
    expect(parseProtocolHeader(bytes('414d515000010000'))).toEqual({
      id: 0,
      major: 1,
      minor: 0,
      revision: 0,
    });
    expect(() => parseProtocolHeader(bytes('485454502f312e31'))).toThrow(AmqpDecodeError);
  });

  it('delivery states and a message', () => {
    expect(hex(encodeDeliveryState({ type: 'accepted' }))).toBe('00532445');
    expect(decodeDeliveryState(bytes('00532445'))).toEqual({ type: 'accepted' });
    expect(hex(encodeDeliveryState({ type: 'released' }))).toBe('00532645');
    expect(hex(encodeDeliveryState({ type: 'rejected', error: { condition: 'amqp:not-found' } }))).toBe(
      `005325c0170100531dc01101a30e${Buffer.from('amqp:not-found').toString('hex')}`,
    );
    expect(hex(encodeMessage({ durable: true, body: 'x' }))).toBe('005370c00201' + '41' + '005377a10178');
    expect(hex(encodeMessage({ messageId: 7, body: bytes('ff') }))).toBe(
      '005373c00301' + '5307' + '005375a001ff',
    );
  });
});

describe('encoding errors', () => {
  it('rejects out-of-range and wrongly typed values with AmqpEncodeError, cycles included', async () => {
    const { AmqpEncodeError } = await import('../../src/errors.js');
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    for (const bad of [
      cyclic,
      new Typed('ubyte', 300),
      new Typed('uint', -1),
      new Typed('ulong', 2n ** 64n),
      2n ** 63n,
      new Typed('uuid', 'nope'),
      new Typed('array', [1], undefined, undefined),
      Symbol('x') as unknown as AmqpValue,
      (() => 1) as unknown as AmqpValue,
    ]) {
      expect(() => encodeValue(bad as AmqpValue)).toThrow(AmqpEncodeError);
    }
    expect(() => encodeAmqpFrame(0, { type: 'open', body: {} as never })).toThrow(/container-id/);
    // the scratch writer recovers after an error
    expect(hex(encodeValue(1))).toBe('5401');
  });
});
