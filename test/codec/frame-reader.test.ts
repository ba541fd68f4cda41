import { describe, expect, it } from 'vitest';
import {
  AmqpDecodeError,
  encodeAmqpFrame,
  encodeHeartbeat,
  encodeProtocolHeader,
  encodeSaslFrame,
  FrameReader,
} from '../../src/codec/index.js';

const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

const FRAMES = [
  encodeProtocolHeader(3),
  encodeSaslFrame({ type: 'sasl-mechanisms', body: { saslServerMechanisms: ['PLAIN', 'ANONYMOUS'] } }),
  encodeProtocolHeader(0),
  encodeAmqpFrame(0, { type: 'open', body: { containerId: 'c1', maxFrameSize: 65536 } }),
  encodeAmqpFrame(1, {
    type: 'begin',
    body: { nextOutgoingId: 0, incomingWindow: 100, outgoingWindow: 100 },
  }),
  encodeAmqpFrame(
    1,
    { type: 'transfer', body: { handle: 0, deliveryId: 0, deliveryTag: Uint8Array.of(1) } },
    Uint8Array.from({ length: 300 }, (_, i) => i & 0xff),
  ),
  encodeHeartbeat(),
  encodeAmqpFrame(1, { type: 'transfer', body: { handle: 0, more: true } }, new Uint8Array(0)),
  encodeAmqpFrame(0, { type: 'close', body: {} }),
];
const STREAM = concat(FRAMES);

/** drain a reader: protocol headers are announced before the frames that expect them */
function readAll(chunks: Uint8Array[]) {
  const r = new FrameReader({ maxFrameSize: 1024 });
  const out: unknown[] = [];
  r.expectProtocolHeader();
  for (const c of chunks) {
    r.push(c);
    for (let f = r.next(); f !== undefined; f = r.next()) {
      out.push(f);
      if (f.kind === 'sasl') r.expectProtocolHeader();
    }
  }
  expect(r.buffered).toBe(0);
  return out;
}

describe('FrameReader', () => {
  const expected = readAll([STREAM]);

  it('reads a whole stream', () => {
    expect(expected.map((f) => (f as { kind: string }).kind)).toEqual([
      'protocol-header',
      'sasl',
      'protocol-header',
      'amqp',
      'amqp',
      'amqp',
      'heartbeat',
      'amqp',
      'amqp',
    ]);
    const transfer = expected[5] as { payload: Uint8Array };
    expect(transfer.payload.length).toBe(300);
    expect((expected[7] as { payload: Uint8Array }).payload.length).toBe(0);
  });

  it('gives the same frames with the bytes split at every position (2 and 3 chunks)', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(readAll([STREAM.subarray(0, i), STREAM.subarray(i)])).toEqual(expected);
    }
    for (let i = 0; i <= STREAM.length; i += 17) {
      for (let j = i; j <= STREAM.length; j += 13) {
        expect(readAll([STREAM.subarray(0, i), STREAM.subarray(i, j), STREAM.subarray(j)])).toEqual(expected);
      }
    }
  });

  it('gives the same frames one byte at a time', () => {
    const chunks = Array.from(STREAM, (b) => Uint8Array.of(b));
    expect(readAll(chunks)).toEqual(expected);
  });

  it('payload is a view of the chunk when the frame lies in one chunk', () => {
    const chunk = FRAMES[5];
    const r = new FrameReader({ maxFrameSize: 1024 });
    r.push(chunk);
    const f = r.next() as { payload: Uint8Array };
    expect(f.payload.buffer).toBe(chunk.buffer);
  });

  it('payload is a Buffer view, so decoding its message wraps it in no further view', () => {
    const r = new FrameReader({ maxFrameSize: 1024 });
    r.push(FRAMES[5]);
    const f = r.next() as { payload: Uint8Array };
    expect(Buffer.isBuffer(f.payload)).toBe(true);
    expect(f.payload.buffer).toBe(FRAMES[5].buffer);
    expect([...f.payload.subarray(0, 3)]).toEqual([0, 1, 2]);
  });

  it('rejects SIZE < 8, DOFF < 2, SIZE < DOFF*4, oversized frames and empty SASL frames', () => {
    const bad = (hex: string, condition = 'amqp:connection:framing-error') => {
      const r = new FrameReader();
      r.push(new Uint8Array(Buffer.from(hex, 'hex')));
      let err: unknown;
      try {
        r.next();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AmqpDecodeError);
      expect((err as AmqpDecodeError).condition).toBe(condition);
      // a failed reader stays failed
      expect(() => r.next()).toThrow(AmqpDecodeError);
    };
    bad('0000000702000000');
    bad('0000000801000000');
    bad('0000000c04000000' + '00000000');
    bad('0000020102000000');
    bad('0000000802010000');
    bad('0000000802050000');
    bad('0000000c0200000000531045', 'amqp:decode-error'); // open without container-id
  });

  it('accepts frames up to the max frame size it was told, skips extended headers', () => {
    const open = encodeAmqpFrame(0, { type: 'open', body: { containerId: 'x'.repeat(600) } });
    const r = new FrameReader();
    r.push(open);
    expect(() => r.next()).toThrow(/exceeds max frame size 512/);
    const r2 = new FrameReader();
    r2.setMaxFrameSize(4096);
    r2.push(open);
    expect((r2.next() as { kind: string }).kind).toBe('amqp');
    expect(() => r2.setMaxFrameSize(100)).toThrow(AmqpDecodeError);
    // DOFF 3: 4 bytes of extended header before the body
    const ext = Buffer.from('0000000c03000000' + 'deadbeef', 'hex');
    const r3 = new FrameReader();
    r3.push(ext);
    expect(r3.next()).toEqual({ kind: 'heartbeat', channel: 0 });
  });

  it('accepts a frame of exactly the max frame size and refuses one byte more', () => {
    const max = 4096;
    // an empty-bodied transfer carrying a payload that pads the frame to `size` bytes
    const frameOf = (size: number) => {
      const head = encodeAmqpFrame(
        1,
        { type: 'transfer', body: { handle: 0, more: true } },
        new Uint8Array(0),
      );
      const frame = encodeAmqpFrame(
        1,
        { type: 'transfer', body: { handle: 0, more: true } },
        new Uint8Array(size - head.length),
      );
      expect(frame.length).toBe(size);
      return frame;
    };
    const atMax = new FrameReader({ maxFrameSize: max });
    atMax.push(frameOf(max));
    expect((atMax.next() as { kind: string }).kind).toBe('amqp');
    expect(atMax.buffered).toBe(0);

    const overMax = new FrameReader({ maxFrameSize: max });
    overMax.push(frameOf(max + 1).subarray(0, 8)); // the header alone is enough to refuse
    expect(() => overMax.next()).toThrow(/frame size 4097 exceeds max frame size 4096/);
  });

  it('rejects a bad protocol header', () => {
    const r = new FrameReader();
    r.expectProtocolHeader();
    r.push(Buffer.from('GET / HTTP/1.1\r\n'));
    expect(() => r.next()).toThrow(AmqpDecodeError);
  });

  it('with reuseTransferFrames, reads each transfer anew into the one object, fields of the last one gone', () => {
    const tag = Uint8Array.of(7, 7);
    const state = { type: 'received', sectionNumber: 1, sectionOffset: 2 } as const;
    const r = new FrameReader({ maxFrameSize: 1024, reuseTransferFrames: true });
    r.push(
      concat([
        encodeAmqpFrame(
          3,
          {
            type: 'transfer',
            body: { handle: 1, deliveryId: 9, deliveryTag: tag, settled: true, more: true, state },
          },
          Uint8Array.of(1, 2, 3),
        ),
        encodeAmqpFrame(0, {
          type: 'flow',
          body: { nextIncomingId: 1, incomingWindow: 5, nextOutgoingId: 0, outgoingWindow: 5 },
        }),
        encodeAmqpFrame(4, { type: 'transfer', body: { handle: 2 } }, Uint8Array.of(4)),
      ]),
    );
    type Read = {
      kind: string;
      channel: number;
      performative: { type: string; body: unknown };
      payload: Uint8Array;
    };
    const first = r.next() as Read;
    expect(first.channel).toBe(3);
    expect(first.performative.type).toBe('transfer');
    expect(first.performative.body).toMatchObject({
      handle: 1,
      deliveryId: 9,
      settled: true,
      more: true,
      state,
    });
    expect([...first.payload]).toEqual([1, 2, 3]);
    const flow = r.next() as Read;
    expect(flow).not.toBe(first);
    expect(flow.performative.type).toBe('flow');
    const second = r.next() as Read;
    expect(second).toBe(first);
    expect(second.channel).toBe(4);
    expect([...second.payload]).toEqual([4]);
    const body = second.performative.body as Record<string, unknown>;
    expect(body.handle).toBe(2);
    for (const k of ['deliveryId', 'deliveryTag', 'settled', 'more', 'state'])
      expect(body[k]).toBeUndefined();
  });
});
