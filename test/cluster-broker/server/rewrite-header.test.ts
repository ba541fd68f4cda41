import { describe, expect, it } from 'vitest';
import { rewriteHeader } from '../../../src/cluster-broker/server/index.js';
import {
  FIRST_ACQUIRER_ONLY,
  hasFirstAcquirerOnlyHeader,
} from '../../../src/cluster-broker/server/stored-header.js';
import { decodeMessage, encodeMessage, splitMessage, withHeader } from '../../../src/codec/index.js';

/** What a publisher link stores for a message sent without a header. */
function storedWithoutHeader(body: string): Uint8Array {
  const sent = encodeMessage({ body, messageId: 'm1' });
  const out = new Uint8Array(FIRST_ACQUIRER_ONLY.length + sent.length);
  out.set(FIRST_ACQUIRER_ONLY, 0);
  out.set(sent, FIRST_ACQUIRER_ONLY.length);
  return out;
}

const acquired = (message: Uint8Array, deliveryCount: number, firstAcquirer: boolean) => ({
  seq: 1,
  queue: 'q',
  message,
  deliveryCount,
  firstAcquirer,
});

describe('rewriteHeader (docs/architecture.md#delivery-path)', () => {
  it('recognises the stored first-acquirer-only header by its bytes', () => {
    expect(hasFirstAcquirerOnlyHeader(storedWithoutHeader('x'))).toBe(true);
    expect(hasFirstAcquirerOnlyHeader(encodeMessage({ body: 'x' }))).toBe(false);
    expect(
      hasFirstAcquirerOnlyHeader(
        withHeader(encodeMessage({ body: 'x' }), { durable: true, firstAcquirer: true }),
      ),
    ).toBe(false);
    expect(hasFirstAcquirerOnlyHeader(FIRST_ACQUIRER_ONLY.subarray(0, 5))).toBe(false);
    // the same list with first-acquirer false: only the last byte differs
    const notFirst = storedWithoutHeader('x');
    notFirst[FIRST_ACQUIRER_ONLY.length - 1] = 0x42;
    expect(hasFirstAcquirerOnlyHeader(notFirst)).toBe(false);
  });

  it('sends a first delivery as stored, the same bytes', () => {
    const stored = storedWithoutHeader('hello');
    expect(rewriteHeader(acquired(stored, 0, true))).toBe(stored);
  });

  it('rewrites the header of a redelivery of such a message, the rest untouched', () => {
    const stored = storedWithoutHeader('hello');
    const again = decodeMessage(rewriteHeader(acquired(stored, 2, false)));
    expect(again.deliveryCount).toBe(2);
    expect(again.firstAcquirer).toBeUndefined();
    expect(again.body).toBe('hello');
    expect(again.messageId).toBe('m1');
    // acquired before by another link (a browser's copy, a released message): not a first acquirer
    const notFirst = decodeMessage(rewriteHeader(acquired(stored, 0, false)));
    expect(notFirst.firstAcquirer).toBeUndefined();
    expect(notFirst.deliveryCount).toBeUndefined();
  });

  it('rewrites a first delivery whose stored header says more than first-acquirer', () => {
    const stored = withHeader(encodeMessage({ body: 'b' }), {
      durable: true,
      firstAcquirer: true,
      deliveryCount: 3,
    });
    const out = rewriteHeader(acquired(stored, 0, true));
    expect(splitMessage(out).header).toEqual({ durable: true, firstAcquirer: true });
  });
});
