/**
 * Terms and indexes are JavaScript numbers, exact only up to 2^53 - 1. A term of 2^53 cannot be
 * incremented (2^53 + 1 === 2^53), so a member that adopted one could never win an election
 * again: such values (and negative, fractional or NaN ones) are refused wherever they arrive,
 * from a peer or from storage, and never adopted.
 */
import { ReplicationError } from './errors.js';
import type { Entry, Message } from './raft/types.js';

/** A term or index we can count with: a non-negative safe integer. */
export function isCountable(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** A term, index or count outside the safe integers (condition amqp:decode-error). */
export class UnsafeNumberError extends ReplicationError {
  readonly field: string;
  readonly value: number;
  constructor(where: string, field: string, value: number) {
    super('amqp:decode-error', `${where}: ${field} ${value} is not a safe non-negative integer; refused`, {
      info: { field, value: String(value) },
    });
    this.name = 'UnsafeNumberError';
    this.field = field;
    this.value = value;
  }
}

function check(where: string, field: string, value: number): void {
  if (!isCountable(value)) throw new UnsafeNumberError(where, field, value);
}

export function assertSafeEntry(where: string, e: Entry): void {
  check(where, 'entry index', e.index);
  check(where, 'entry term', e.term);
}

/** Throws UnsafeNumberError if any term or index of `m` is not a safe non-negative integer. */
export function assertSafeMessage(where: string, m: Message): void {
  check(where, 'term', m.term);
  switch (m.type) {
    case 'append':
      check(where, 'prevIndex', m.prevIndex);
      check(where, 'prevTerm', m.prevTerm);
      check(where, 'commit', m.commit);
      for (const e of m.entries) assertSafeEntry(where, e);
      break;
    case 'append-response':
      check(where, 'matchIndex', m.matchIndex);
      check(where, 'rejectedPrev', m.rejectedPrev);
      // hintIndex may be -1 (nothing matches) in the fast back-up
      if (!Number.isSafeInteger(m.hintIndex) || m.hintIndex < -1) check(where, 'hintIndex', m.hintIndex);
      break;
    case 'vote':
      check(where, 'lastIndex', m.lastIndex);
      check(where, 'lastTerm', m.lastTerm);
      break;
    case 'snapshot':
      check(where, 'snapshot index', m.snapshot.index);
      check(where, 'snapshot term', m.snapshot.term);
      break;
    case 'heartbeat':
      check(where, 'commit', m.commit);
      break;
    case 'vote-response':
    case 'heartbeat-response':
      break;
  }
}
