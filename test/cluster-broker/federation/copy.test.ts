/** The copy a federation link commits (docs/federation.md#the-copy): the bare message passes through. */
import { describe, expect, it } from 'vitest';
import { bareMessageStart, movedCopy } from '../../../src/cluster-broker/federation/copy.js';
import { enqueueEventFor } from '../../../src/cluster-broker/server/publisher-link.js';
import { AmqpDecodeError } from '../../../src/codec/index.js';
import { decodeMessage, encodeMessage, type Message } from '../../../src/codec/message.js';

const bare: Message = {
  messageId: 'm-1',
  subject: 'orders',
  contentType: 'application/octet-stream',
  applicationProperties: { region: 'eu', n: 3 },
  body: Buffer.alloc(1024, 0x61),
  footer: { 'x-check': 'abc' },
};

describe('movedCopy', () => {
  it('writes header and annotations anew and keeps the bare message byte for byte', () => {
    const original: Message = {
      durable: true,
      priority: 7,
      ttl: 60_000,
      firstAcquirer: true,
      deliveryCount: 3,
      deliveryAnnotations: { 'x-opt-hop': 'one' },
      messageAnnotations: { 'x-opt-app': 'kept', 'x-opt-quorate-route': ['A'] },
      ...bare,
    };
    const encoded = encodeMessage(original);
    const annotations = { 'x-opt-app': 'kept', 'x-opt-quorate-route': ['A', 'B'] };
    const copy = movedCopy(encoded, decodeMessage(encoded), ['A'], 'B');

    const bareBytes = encodeMessage(bare);
    expect(Buffer.from(copy.subarray(copy.length - bareBytes.length)).equals(Buffer.from(bareBytes))).toBe(
      true,
    );
    expect(encoded.subarray(bareMessageStart(encoded))).toEqual(bareBytes);
    // a new enqueue in its stored form: no delivery-count, first-acquirer set, no delivery
    // annotations (one hop only)
    expect(decodeMessage(copy)).toEqual(
      decodeMessage(
        encodeMessage({
          durable: true,
          priority: 7,
          ttl: 60_000,
          firstAcquirer: true,
          messageAnnotations: annotations,
          ...bare,
        }),
      ),
    );
  });

  it('adds the route in front of a message that has no header or annotations', () => {
    const encoded = encodeMessage(bare);
    expect(bareMessageStart(encoded)).toBe(0);
    const copy = movedCopy(encoded, decodeMessage(encoded), [], 'A');
    expect(decodeMessage(copy)).toEqual({
      ...decodeMessage(encoded),
      firstAcquirer: true,
      messageAnnotations: { 'x-opt-quorate-route': ['A'] },
    });
  });

  it('writes the front of unannotated messages anew whenever a header field or the origin differs', () => {
    // one after another, as a link moves them: each copy has its own header and route
    const cases: Message[] = [
      { durable: true, ttl: 1_000 },
      { durable: true, ttl: 1_000 },
      { durable: true, ttl: 2_000 },
      { durable: true },
      { durable: false },
      { priority: 9 },
      {},
    ];
    const expectCopy = (header: Message, from: string) => {
      const encoded = encodeMessage({ ...header, ...bare });
      expect(decodeMessage(movedCopy(encoded, decodeMessage(encoded), [], from))).toEqual(
        decodeMessage(
          encodeMessage({
            ...header,
            firstAcquirer: true,
            messageAnnotations: { 'x-opt-quorate-route': [from] },
            ...bare,
          }),
        ),
      );
    };
    // only a header field changes from one to the next
    for (const header of cases) expectCopy(header, 'A');
    // only the origin changes
    for (const header of cases) for (const from of ['A', 'A', 'B']) expectCopy(header, from);
  });

  it('copies a message of header and annotations only (no bare message)', () => {
    const encoded = encodeMessage({ durable: true, messageAnnotations: { k: 'v' } });
    expect(bareMessageStart(encoded)).toBe(encoded.length);
    expect(decodeMessage(movedCopy(encoded, decodeMessage(encoded), [], 'A'))).toEqual({
      durable: true,
      firstAcquirer: true,
      messageAnnotations: { k: 'v', 'x-opt-quorate-route': ['A'] },
    });
  });

  it("is the stored form: the link's enqueue keeps it as it is, no second copy", () => {
    for (const original of [
      bare,
      { durable: true, ttl: 5_000, ...bare },
      { messageAnnotations: { k: 'v' }, ...bare },
    ]) {
      const encoded = encodeMessage(original);
      const copy = movedCopy(encoded, decodeMessage(encoded), [], 'A');
      // the link's own buffer (owned): the event carries the copy itself
      expect(enqueueEventFor(copy, 'q', 0, true, true).message).toBe(copy);
      // and it is what the queue would store for it anyway
      expect(enqueueEventFor(copy, 'q', 0, true).message).toEqual(copy);
    }
  });

  it('refuses bytes that are not message sections with AmqpDecodeError', () => {
    expect(() => bareMessageStart(Uint8Array.of(0x41, 0x00))).toThrow(AmqpDecodeError);
    // a header section cut short
    const cut = encodeMessage({ durable: true, ...bare }).subarray(0, 4);
    expect(() => bareMessageStart(cut)).toThrow(AmqpDecodeError);
  });
});
