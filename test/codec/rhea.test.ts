/**
 * Cross-checks against rhea 3.0.5: what rhea encodes we decode to equal values, and what we
 * encode rhea decodes to equal values, for messages and every performative.
 */
import fc from 'fast-check';
import rhea from 'rhea';
import rheaFrames from 'rhea/lib/frames.js';
import { describe, expect, it } from 'vitest';
import { COMPOSITES, type FieldDef } from '../../src/codec/composites.js';
import {
  decodeMessage,
  encodeAmqpFrame,
  encodeMessage,
  encodeSaslFrame,
  FrameReader,
  type Performative,
  type SaslPerformative,
  Typed,
} from '../../src/codec/index.js';
import { ascii, text } from './arbitraries.js';

type Loose = Record<string, unknown>;
// rhea's API is untyped JS: these local views are all the tests rely on
const R = rhea as unknown as {
  message: { encode(m: Loose): Buffer; decode(b: Buffer): Loose; data_section(b: Buffer): unknown };
};
const F = rheaFrames as unknown as {
  read_frame(b: Buffer): { channel: number; type: number; performative: Loose; payload?: Buffer };
  write_frame(f: unknown): Buffer;
  amqp_frame(channel: number, performative: unknown, payload?: Buffer): unknown;
  sasl_frame(performative: unknown): unknown;
} & Record<string, (fields: Loose) => unknown>;

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** a comparable form: Typed -> its value, bytes -> hex, Date -> ms, bigint -> string, null -> undefined */
function norm(v: unknown): unknown {
  if (v instanceof Typed) return norm(v.value);
  if (v instanceof Uint8Array) return `hex:${Buffer.from(v).toString('hex')}`;
  if (v instanceof Date) return `date:${v.getTime()}`;
  if (typeof v === 'bigint') return `big:${v}`;
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === 'object') {
    const o: Loose = {};
    for (const [k, x] of Object.entries(v as Loose)) if (x !== undefined && x !== null) o[k] = norm(x);
    return o;
  }
  return v;
}

const date = fc.integer({ min: 0, max: 4e12 }).map((t) => new Date(t));
const simple = fc.oneof(
  text,
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.boolean(),
  fc.double({ noNaN: true }).filter((x) => !Number.isInteger(x)),
);

/** a message both libraries can express, in our camelCase shape */
const portableMessage = fc
  .tuple(
    fc.record(
      {
        durable: fc.boolean(),
        priority: fc.integer({ min: 0, max: 255 }),
        ttl: fc.nat(0xffffffff),
        firstAcquirer: fc.boolean(),
        deliveryCount: fc.nat(0xffffffff),
        messageAnnotations: fc.dictionary(
          ascii.filter((k) => k.length > 0),
          text,
          { maxKeys: 3 },
        ),
        messageId: fc.oneof(text, fc.nat()),
        userId: fc.uint8Array({ maxLength: 20 }),
        to: text,
        subject: text,
        replyTo: text,
        correlationId: text,
        contentType: ascii,
        contentEncoding: ascii,
        absoluteExpiryTime: date,
        creationTime: date,
        groupId: text,
        groupSequence: fc.nat(0xffffffff),
        replyToGroupId: text,
        applicationProperties: fc.dictionary(
          ascii.filter((k) => k.length > 0),
          simple,
          { maxKeys: 4 },
        ),
      },
      { requiredKeys: [] },
    ),
    fc.oneof(text, fc.uint8Array({ maxLength: 300 })),
  )
  .map(([m, body]) => ({ ...m, body }));

function toRhea(m: Loose): Loose {
  const out: Loose = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === 'body') out.body = v instanceof Uint8Array ? R.message.data_section(Buffer.from(v)) : v;
    else if (k === 'userId') out.user_id = Buffer.from(v as Uint8Array);
    else out[snake(k)] = v;
  }
  return out;
}

function fromRhea(m: Loose): Loose {
  const out: Loose = {};
  for (const [k, v] of Object.entries(m)) {
    const camel = k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (k === 'body' && v !== null && typeof v === 'object' && 'content' in (v as Loose))
      out.body = (v as Loose).content;
    else out[camel] = v;
  }
  return out;
}

describe('cross-check with rhea 3.0.5', () => {
  it('messages rhea encodes decode to equal values', () => {
    fc.assert(
      fc.property(portableMessage, (m) => {
        const bytes = R.message.encode(toRhea(m));
        expect(norm(decodeMessage(bytes))).toEqual(norm(m));
      }),
      { numRuns: 400 },
    );
  });

  it('messages we encode rhea decodes to equal values', () => {
    fc.assert(
      fc.property(portableMessage, (m) => {
        const back = fromRhea(R.message.decode(Buffer.from(encodeMessage(m))));
        expect(norm(back)).toEqual(norm(m));
      }),
      { numRuns: 400 },
    );
  });

  // scalar fields of every performative (nested composites are checked by the fixed cases below)
  const scalarArb = (fd: FieldDef): fc.Arbitrary<unknown> | undefined => {
    const one = ((): fc.Arbitrary<unknown> | undefined => {
      switch (fd.type) {
        case 'boolean':
          return fc.boolean();
        case 'ubyte':
          return fc.integer({ min: 0, max: 255 });
        case 'ushort':
          return fc.integer({ min: 0, max: 0xffff });
        case 'uint':
          return fc.nat(0xffffffff);
        case 'ulong':
          return fc.nat();
        case 'string':
          return text;
        case 'symbol':
          return ascii;
        case 'binary':
          return fc.uint8Array({ maxLength: 30 });
        case 'fields':
          return fc.dictionary(
            ascii.filter((k) => k.length > 0),
            text,
            { maxKeys: 3 },
          );
        default:
          return undefined;
      }
    })();
    if (one === undefined) return undefined;
    return fd.multiple ? fc.array(one, { minLength: 1, maxLength: 3 }) : one;
  };

  for (const def of COMPOSITES.filter((d) => d.kind === 'performative' || d.kind === 'sasl')) {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const fd of def.fields) {
      const a = scalarArb(fd);
      if (a !== undefined) model[fd.name] = a;
    }
    const arb = fc.record(model, {
      requiredKeys: def.fields.filter((f) => f.mandatory && model[f.name]).map((f) => f.name),
    });
    const rheaName = def.name.replace(/-/g, '_');

    it(`${def.name}: rhea reads what we write, we read what rhea writes`, () => {
      fc.assert(
        fc.property(arb, (body) => {
          const sasl = def.kind === 'sasl';
          const p = { type: def.name, body } as unknown;
          const ours = sasl ? encodeSaslFrame(p as SaslPerformative) : encodeAmqpFrame(3, p as Performative);
          const read = F.read_frame(Buffer.from(ours));
          for (const fd of def.fields) {
            if (model[fd.name] === undefined) continue;
            expect(norm(read.performative[snake(fd.name)])).toEqual(norm(body[fd.name]));
          }
          const rheaFields: Loose = {};
          for (const [k, v] of Object.entries(body))
            rheaFields[snake(k)] = v instanceof Uint8Array ? Buffer.from(v) : v;
          const perf = F[rheaName](rheaFields);
          const theirs = F.write_frame(sasl ? F.sasl_frame(perf) : F.amqp_frame(3, perf));
          const r = new FrameReader({ maxFrameSize: 1 << 20 });
          r.push(theirs);
          const f = r.next() as unknown as { performative: { type: string; body: Loose } };
          expect(f.performative.type).toBe(def.name);
          expect(norm(f.performative.body)).toEqual(norm(body));
        }),
        { numRuns: 150 },
      );
    });
  }

  it('nested composites: close with error, disposition with outcome, attach with source/target', () => {
    const close = F.read_frame(
      Buffer.from(
        encodeAmqpFrame(0, {
          type: 'close',
          body: { error: { condition: 'amqp:internal-error', description: 'boom', info: { a: 'b' } } },
        }),
      ),
    ).performative;
    const err = close.error as Loose;
    expect([err.condition, err.description, err.info]).toEqual(['amqp:internal-error', 'boom', { a: 'b' }]);

    const theirs = F.write_frame(
      F.amqp_frame(0, F.close({ error: { condition: 'amqp:connection:forced', description: 'bye' } })),
    );
    const r = new FrameReader();
    r.push(theirs);
    expect(r.next()).toEqual({
      kind: 'amqp',
      channel: 0,
      performative: {
        type: 'close',
        body: { error: { condition: 'amqp:connection:forced', description: 'bye' } },
      },
    });

    const disp = F.read_frame(
      Buffer.from(
        encodeAmqpFrame(0, {
          type: 'disposition',
          body: { role: true, first: 1, settled: true, state: { type: 'accepted' } },
        }),
      ),
    ).performative;
    expect((disp.state as { descriptor: { value: number } }).descriptor.value).toBe(0x24);

    const attach = encodeAmqpFrame(1, {
      type: 'attach',
      body: {
        name: 'l',
        handle: 0,
        role: true,
        source: { address: 'q', durable: 2 },
        target: { address: 't' },
      },
    });
    const ra = F.read_frame(Buffer.from(attach)).performative;
    const src = ra.source as { descriptor: { value: number }; value: { value: unknown }[] };
    expect(src.descriptor.value).toBe(0x28);
    expect(src.value[0].value).toBe('q');
    expect(src.value[1].value).toBe(2);
  });
});
