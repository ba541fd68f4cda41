import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { UnsafeNumberError } from '../../../src/cluster-broker/replication/safe-numbers.js';
import { amqpWireCodec, type WireCodec } from '../../../src/cluster-broker/replication/wire.js';
import { binaryWireCodec } from '../../../src/cluster-broker/replication/wire-binary.js';

const big = 2 ** 40 + 3;
const samples: Message[] = [
  {
    type: 'append',
    from: 'n1',
    to: 'n2',
    term: 7,
    prevIndex: big,
    prevTerm: 6,
    commit: 0,
    entries: [
      { index: big + 1, term: 7, data: null },
      { index: big + 2, term: 7, data: new Uint8Array([1, 2, 3]) },
      { index: big + 3, term: 7, data: new Uint8Array(0) },
    ],
  },
  { type: 'append', from: 'a', to: 'b', term: 1, prevIndex: 0, prevTerm: 0, commit: 0, entries: [] },
  {
    type: 'append-response',
    from: 'n2',
    to: 'n1',
    term: 7,
    success: false,
    matchIndex: 0,
    rejectedPrev: 9,
    hintIndex: 4,
  },
  { type: 'vote', from: 'n3', to: 'n1', term: 2 ** 31 + 5, pre: true, lastIndex: 3, lastTerm: 1 },
  { type: 'vote-response', from: 'n1', to: 'n3', term: 1, pre: false, granted: true },
  // the recovery flags (issue 10): a recovering follower's answer, a blank member's vote traffic
  {
    type: 'append-response',
    from: 'n2',
    to: 'n1',
    term: 7,
    success: true,
    matchIndex: 12,
    rejectedPrev: 0,
    hintIndex: 0,
    recovering: true,
  },
  { type: 'vote', from: 'n3', to: 'n1', term: 1, pre: true, lastIndex: 0, lastTerm: 0, blank: true },
  { type: 'vote-response', from: 'n1', to: 'n3', term: 1, pre: true, granted: true, blank: true },
  { type: 'heartbeat', from: 'n1', to: 'n2', term: 4, commit: 9, recovered: true },
  // with the follower's incarnation, which the leader's news echoes (a late news about an earlier
  // incarnation must not end a later one's recovery)
  {
    type: 'append-response',
    from: 'n2',
    to: 'n1',
    term: 7,
    success: false,
    matchIndex: 0,
    rejectedPrev: 5,
    hintIndex: 0,
    recovering: true,
    recoveryRound: 0x7ffffffe,
  },
  { type: 'heartbeat', from: 'n1', to: 'n2', term: 4, commit: 9, recovered: true, recoveryRound: 123_456 },
  {
    type: 'snapshot',
    from: 'n1',
    to: 'n3',
    term: 3,
    snapshot: { index: 99, term: 2, data: new Uint8Array([9]) },
  },
];

const withLarge: Message = {
  type: 'append',
  from: 'n1',
  to: 'n2',
  term: 2,
  prevIndex: 10,
  prevTerm: 2,
  commit: 9,
  entries: Array.from({ length: 20 }, (_, i) => ({
    index: 11 + i,
    term: 2,
    data: new Uint8Array(1024).fill(i),
  })),
};

const codecs: [string, WireCodec][] = [
  ['AMQP values', amqpWireCodec],
  ['binary', binaryWireCodec],
];

describe.each(codecs)('replication wire codec (%s)', (_name, codec) => {
  it('round-trips every message type, large appends included', () => {
    for (const m of [...samples, withLarge]) {
      const back = codec.decodeMessage(codec.encodeMessage(m));
      expect(back).toEqual(m);
    }
  });

  it('rejects garbage', () => {
    expect(() => codec.decodeMessage(new Uint8Array([0xff, 1]))).toThrow();
  });

  it('refuses terms and indexes outside the safe integers (a term of 2^53 could never be incremented)', () => {
    const unsafe: Message[] = [
      { type: 'vote', from: 'n3', to: 'n1', term: 2 ** 53, pre: false, lastIndex: 3, lastTerm: 1 },
      { type: 'heartbeat', from: 'n1', to: 'n2', term: 2, commit: 2 ** 53 + 2 },
      { ...withLarge, entries: [{ index: 11, term: 2 ** 60, data: null }] },
      {
        type: 'append-response',
        from: 'n2',
        to: 'n1',
        term: 1,
        success: true,
        matchIndex: -1,
        rejectedPrev: 0,
        hintIndex: 0,
      },
      {
        type: 'snapshot',
        from: 'n1',
        to: 'n2',
        term: 1,
        snapshot: { index: 1.5, term: 1, data: new Uint8Array(0) },
      },
    ];
    for (const m of unsafe) {
      expect(() => codec.decodeMessage(codec.encodeMessage(m))).toThrow(UnsafeNumberError);
    }
    expect(() => codec.decodeMessage(codec.encodeMessage(unsafe[0]!))).toThrow(
      /term 9007199254740992 .*refused/,
    );
  });
});
