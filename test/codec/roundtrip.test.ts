import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BY_NAME, COMPOSITES } from '../../src/codec/composites.js';
import {
  decodeComposite,
  decodeDeliveryState,
  decodeMessage,
  decodeValue,
  encodeAmqpFrame,
  encodeComposite,
  encodeDeliveryState,
  encodeMessage,
  encodeMessageParts,
  encodeSaslFrame,
  encodeValue,
  FrameReader,
  type Performative,
  type SaslPerformative,
} from '../../src/codec/index.js';
import { compositeArb, deliveryState, message, value } from './arbitraries.js';

const RUNS = { numRuns: 300 };

describe('round trips (property-based)', () => {
  it('every value: decode(encode(v)) deep-equals v and re-encodes to the same bytes', () => {
    fc.assert(
      fc.property(value, (v) => {
        const bytes = encodeValue(v);
        const back = decodeValue(bytes);
        expect(back).toEqual(v);
        expect(Buffer.from(encodeValue(back)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  for (const def of COMPOSITES.filter((d) => d.kind === 'performative')) {
    it(`performative ${def.name} through a frame and the FrameReader`, () => {
      fc.assert(
        fc.property(
          compositeArb(def, BY_NAME),
          fc.nat(0xffff),
          fc.uint8Array({ maxLength: 50 }),
          (body, channel, payload) => {
            const p = { type: def.name, body } as unknown as Performative;
            const isTransfer = def.name === 'transfer';
            const frame = encodeAmqpFrame(channel, p, isTransfer ? payload : undefined);
            const r = new FrameReader({ maxFrameSize: 1 << 24 });
            r.push(frame);
            const got = r.next();
            expect(got).toEqual(
              isTransfer
                ? { kind: 'amqp', channel, performative: p, payload: Buffer.from(payload) }
                : { kind: 'amqp', channel, performative: p },
            );
            expect(r.next()).toBeUndefined();
          },
        ),
        RUNS,
      );
    });
  }

  for (const def of COMPOSITES.filter((d) => d.kind === 'sasl')) {
    it(`SASL ${def.name} through a frame`, () => {
      fc.assert(
        fc.property(compositeArb(def, BY_NAME), (body) => {
          const p = { type: def.name, body } as unknown as SaslPerformative;
          const r = new FrameReader({ maxFrameSize: 1 << 24 });
          r.push(encodeSaslFrame(p));
          expect(r.next()).toEqual({ kind: 'sasl', performative: p });
        }),
        RUNS,
      );
    });
  }

  for (const def of COMPOSITES.filter(
    (d) => d.kind !== 'performative' && d.kind !== 'sasl' && d.value === undefined,
  )) {
    it(`composite ${def.name} via encodeComposite/decodeComposite`, () => {
      fc.assert(
        fc.property(compositeArb(def, BY_NAME), (body) => {
          expect(decodeComposite(encodeComposite(def.name, body))).toEqual({ name: def.name, body });
        }),
        { numRuns: 200 },
      );
    });
  }

  it('delivery states', () => {
    fc.assert(
      fc.property(deliveryState, (s) => {
        expect(decodeDeliveryState(encodeDeliveryState(s))).toEqual(s);
      }),
      RUNS,
    );
  });

  it('a message whose body mixes data with amqp-value or amqp-sequence sections is refused', () => {
    const data = encodeMessage({ body: new Uint8Array([1, 2]) });
    const twoData = encodeMessage({ body: [new Uint8Array([1]), new Uint8Array([2])], bodyType: 'data' });
    const value = encodeMessage({ body: 'v' });
    const sequence = encodeMessage({ body: [[1]], bodyType: 'sequence' });
    for (const bytes of [
      Buffer.concat([data, value]),
      Buffer.concat([twoData, value]),
      Buffer.concat([data, sequence]),
      Buffer.concat([sequence, data]),
    ])
      expect(() => decodeMessage(bytes)).toThrow(/mixes body section kinds|out of order/);
    // the sections alone decode
    expect(decodeMessage(Buffer.concat([data]))).toEqual({ body: new Uint8Array([1, 2]) });
  });

  it('messages: decodeMessage(encodeMessage(m)) deep-equals m', () => {
    fc.assert(
      fc.property(message, (m) => {
        const bytes = encodeMessage(m);
        const back = decodeMessage(bytes);
        expect(back).toEqual(m);
        expect(Buffer.from(encodeMessage(back)).equals(Buffer.from(bytes))).toBe(true);
        expect(Buffer.concat(encodeMessageParts(m)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
