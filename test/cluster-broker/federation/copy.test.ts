/** The copy a federation link commits (docs/federation.md#the-copy): the bare message passes through. */
import { describe, expect, it } from 'vitest';
import { bareMessageStart, movedCopy } from '../../../src/cluster-broker/federation/copy.js';
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
    const copy = movedCopy(encoded, decodeMessage(encoded), annotations);

    const bareBytes = encodeMessage(bare);
    expect(Buffer.from(copy.subarray(copy.length - bareBytes.length)).equals(Buffer.from(bareBytes))).toBe(
      true,
    );
    expect(encoded.subarray(bareMessageStart(encoded))).toEqual(bareBytes);
    // a new enqueue: no delivery-count, no first-acquirer, no delivery annotations (one hop only)
    expect(decodeMessage(copy)).toEqual(
      decodeMessage(
        encodeMessage({ durable: true, priority: 7, ttl: 60_000, messageAnnotations: annotations, ...bare }),
      ),
    );
  });

  it('adds the annotations in front of a message that has no header or annotations', () => {
    const encoded = encodeMessage(bare);
    expect(bareMessageStart(encoded)).toBe(0);
    const copy = movedCopy(encoded, decodeMessage(encoded), { 'x-opt-quorate-route': ['A'] });
    expect(decodeMessage(copy)).toEqual({
      ...decodeMessage(encoded),
      messageAnnotations: { 'x-opt-quorate-route': ['A'] },
    });
  });

  it('copies a message of header and annotations only (no bare message)', () => {
    const encoded = encodeMessage({ durable: true, messageAnnotations: { k: 'v' } });
    expect(bareMessageStart(encoded)).toBe(encoded.length);
    expect(decodeMessage(movedCopy(encoded, decodeMessage(encoded), { r: 1 }))).toEqual({
      durable: true,
      messageAnnotations: { r: 1 },
    });
  });

  it('refuses bytes that are not message sections with AmqpDecodeError', () => {
    expect(() => bareMessageStart(Uint8Array.of(0x41, 0x00))).toThrow(AmqpDecodeError);
    // a header section cut short
    const cut = encodeMessage({ durable: true, ...bare }).subarray(0, 4);
    expect(() => bareMessageStart(cut)).toThrow(AmqpDecodeError);
  });
});
