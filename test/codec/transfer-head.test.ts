/**
 * encodeTransferHead (a delivery's first transfer written field by field) against the generic
 * frame encoder: the same bytes for any channel, handle, delivery-id, tag, format, settled and
 * more flags and payload length, so the engine's fast path never changes what goes on the wire.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transfer } from '../../src/codec/contract.js';
import { decodeFrame, encodeAmqpFrameHead, encodeTransferHead } from '../../src/codec/index.js';

const uint = fc.oneof(fc.constantFrom(0, 1, 255, 256, 0xffffffff), fc.integer({ min: 0, max: 0xffffffff }));

describe('encodeTransferHead', () => {
  it('writes the bytes the generic encoder writes for the same transfer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff }),
        uint,
        uint,
        fc.uint8Array({ minLength: 0, maxLength: 32 }),
        uint,
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1 << 20 }),
        (channel, handle, deliveryId, deliveryTag, messageFormat, settled, more, payloadLength) => {
          const t: Transfer = { handle, deliveryId, deliveryTag, messageFormat };
          if (settled) t.settled = true;
          if (more) t.more = true;
          const g = encodeAmqpFrameHead(channel, { type: 'transfer', body: t }, payloadLength);
          const want = Buffer.from(g.buf.subarray(0, g.pos));
          const f = encodeTransferHead(
            channel,
            handle,
            { id: deliveryId, tag: deliveryTag, messageFormat, presettled: settled },
            more,
            payloadLength,
          );
          expect(Buffer.from(f.buf.subarray(0, f.pos))).toEqual(want);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('decodes back to the transfer it was given', () => {
    const tag = Uint8Array.of(1, 2, 3);
    const h = encodeTransferHead(3, 7, { id: 70_000, tag, messageFormat: 0, presettled: false }, true, 5);
    const frame = new Uint8Array(h.pos + 5);
    frame.set(h.buf.subarray(0, h.pos));
    const f = decodeFrame(frame, 0, frame.length);
    if (f.kind !== 'amqp') throw new Error(`decoded a ${f.kind} frame`);
    expect(f.channel).toBe(3);
    expect(f.performative).toMatchObject({
      type: 'transfer',
      body: { handle: 7, deliveryId: 70_000, messageFormat: 0, more: true },
    });
    expect(f.payload?.length).toBe(5);
  });
});
