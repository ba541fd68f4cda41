/**
 * Queue options on disk: the owner user (docs/security.md#identity) is a new field, so options
 * written before it existed must read back as they were, and the new field must round-trip.
 */
import { describe, expect, it } from 'vitest';
import { VarintReader, VarintWriter } from '../../../src/cluster-broker/core/binary.js';
import type { QueueOptions } from '../../../src/cluster-broker/core/events.js';
import { readQueueOptions, writeQueueOptions } from '../../../src/cluster-broker/core/options-codec.js';

const encode = (o: QueueOptions): Uint8Array => {
  const w = new VarintWriter();
  writeQueueOptions(w, o);
  return w.finish();
};
const decode = (bytes: Uint8Array): QueueOptions => readQueueOptions(new VarintReader(bytes));

describe('queue options codec', () => {
  it('reads options written before owners were recorded (bytes of the earlier layout)', () => {
    // flags: DLQ_NONE(8) | TEMPORARY(64) | MORE(128); more: SUBSCRIPTION(2); owner 'c/l', policy 0, topic 't'
    const before = Uint8Array.from([8 | 64 | 128, 2, 3, 0x63, 0x2f, 0x6c, 0, 1, 0x74]);
    const expected: QueueOptions = {
      deadLetterQueue: null,
      temporary: { owner: 'c/l', policy: 'delete-on-close' },
      subscription: { topic: 't' },
    };
    expect(decode(before)).toEqual(expected);
    // and options without an owner are still written exactly so
    expect(Buffer.from(encode(expected)).equals(Buffer.from(before))).toBe(true);
  });

  it('round-trips the owner user, alone and beside every other field', () => {
    const alone: QueueOptions = { ownerUser: 'alice' };
    expect(decode(encode(alone))).toEqual(alone);
    const all: QueueOptions = {
      maxMessages: 3,
      maxBytes: 100,
      deadLetterQueue: 'dead',
      dedupWindowCount: 2,
      dedupWindowMs: 50,
      temporary: { owner: 'c/l', policy: 'delete-on-no-links' },
      subscription: { topic: 't', selector: "s = 'x'" },
      ownerUser: 'bob',
    };
    expect(decode(encode(all))).toEqual(all);
  });
});
