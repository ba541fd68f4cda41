/**
 * The compiled composite writers (straight-line code per field table) against the plain loop
 * that reads fields by name: the same bytes for every composite and any body, the same refusals
 * for a missing mandatory field, and fields that are absent, null or undefined all write as null.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasAnyField, writeComposite, writeCompositeByName } from '../../src/codec/composite-encode.js';
import { BY_NAME, COMPOSITES, HEADER, PROPERTIES, TRANSFER } from '../../src/codec/composites.js';
import { Writer } from '../../src/codec/writer.js';
import { AmqpEncodeError } from '../../src/errors.js';
import { compositeArb } from './arbitraries.js';

type Obj = Record<string, unknown>;

function bytes(write: (w: Writer) => void): Buffer {
  const w = new Writer();
  write(w);
  return Buffer.from(w.buf.subarray(0, w.pos));
}

function refusal(write: () => void): string {
  try {
    write();
  } catch (e) {
    expect(e).toBeInstanceOf(AmqpEncodeError);
    return (e as Error).message;
  }
  throw new Error('no refusal');
}

describe('compiled composite writers', () => {
  for (const def of COMPOSITES.filter((d) => d.value === undefined)) {
    it(`${def.kind} ${def.name}: the bytes of the by-name loop`, () => {
      fc.assert(
        fc.property(compositeArb(def, BY_NAME), (body) => {
          const compiled = bytes((w) => writeComposite(w, def, body));
          expect(compiled.equals(bytes((w) => writeCompositeByName(w, def, body)))).toBe(true);
          // the same object with an unrelated extra property (a message carries its body too)
          const wider = { ...body, unrelated: 1 };
          expect(bytes((w) => writeComposite(w, def, wider)).equals(compiled)).toBe(true);
          expect(hasAnyField(def, body)).toBe(def.fields.some((f) => body[f.name] != null));
        }),
        { numRuns: 100 },
      );
    });
  }

  it('absent, undefined and null fields all write as null; trailing ones are omitted', () => {
    const absent = bytes((w) => writeComposite(w, PROPERTIES, { subject: 's' }));
    const nulls = bytes((w) =>
      writeComposite(w, PROPERTIES, { messageId: null, userId: undefined, subject: 's', groupId: null }),
    );
    expect(nulls.equals(absent)).toBe(true);
    expect(absent.equals(bytes((w) => writeCompositeByName(w, PROPERTIES, { subject: 's' })))).toBe(true);
    // an empty list when nothing is set
    expect([...bytes((w) => writeComposite(w, HEADER, {}))]).toEqual([0x00, 0x53, 0x70, 0x45]);
    expect(hasAnyField(HEADER, {})).toBe(false);
    expect(hasAnyField(HEADER, { durable: false })).toBe(true);
    expect(hasAnyField(HEADER, { durable: null, ttl: undefined })).toBe(false);
  });

  it('a missing mandatory field is refused with the same message on both paths', () => {
    const noHandle: Obj = { deliveryId: 1 };
    const nullHandle: Obj = { handle: null, deliveryId: 1, deliveryTag: new Uint8Array(1) };
    for (const body of [noHandle, nullHandle, {}]) {
      const compiled = refusal(() => writeComposite(new Writer(), TRANSFER, body));
      expect(compiled).toBe(refusal(() => writeCompositeByName(new Writer(), TRANSFER, body)));
      expect(compiled).toMatch(/transfer: mandatory field handle missing$/);
    }
  });
});
