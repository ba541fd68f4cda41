import { describe, expect, it } from 'vitest';
import type { AppendResponseMessage, Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { withoutSupersededAnswers } from '../../../src/cluster-broker/replication/superseded-answers.js';

const ack = (matchIndex: number, extra: Partial<AppendResponseMessage> = {}): AppendResponseMessage => ({
  type: 'append-response',
  from: 'n2',
  to: 'n1',
  term: 3,
  success: true,
  matchIndex,
  rejectedPrev: 0,
  hintIndex: 0,
  ...extra,
});
const heartbeatAnswer = (term = 3, to = 'n1'): Message => ({
  type: 'heartbeat-response',
  from: 'n2',
  to,
  term,
});

describe('withoutSupersededAnswers', () => {
  it("keeps only the last of a Ready's acknowledgements to one leader in one term", () => {
    expect(withoutSupersededAnswers([ack(10), ack(20), ack(35)])).toEqual([ack(35)]);
  });

  it('keeps an acknowledgement higher than the later ones, and every other message in its order', () => {
    const vote: Message = { type: 'vote-response', from: 'n2', to: 'n3', term: 3, pre: true, granted: false };
    expect(withoutSupersededAnswers([ack(40), vote, ack(20), ack(30)])).toEqual([ack(40), vote, ack(30)]);
  });

  it('keeps answers of other terms, to other members, refusals and those of a recovering member', () => {
    const messages = [
      ack(10, { term: 2 }),
      ack(11, { to: 'n3' }),
      ack(0, { success: false, rejectedPrev: 9, hintIndex: 5 }),
      ack(12, { recovering: true }),
      ack(13, { recovering: true }),
      ack(14),
    ];
    expect(withoutSupersededAnswers(messages)).toEqual(messages);
  });

  it('keeps one heartbeat answer per leader and term, the last', () => {
    const messages = [
      heartbeatAnswer(),
      ack(5),
      heartbeatAnswer(),
      heartbeatAnswer(4),
      heartbeatAnswer(3, 'n3'),
    ];
    expect(withoutSupersededAnswers(messages)).toEqual([
      ack(5),
      heartbeatAnswer(),
      heartbeatAnswer(4),
      heartbeatAnswer(3, 'n3'),
    ]);
  });

  it('hands back the same array when nothing is covered', () => {
    const messages = [ack(1), heartbeatAnswer()];
    expect(withoutSupersededAnswers(messages)).toBe(messages);
  });
});
