/**
 * Wire encoding of replication messages between members: the `WireCodec` interface, and
 * `amqpWireCodec`, each message one AMQP value (a list) encoded with our AMQP type codec:
 * `Replica`'s default when no codec is given. A cluster member uses `binaryWireCodec`
 * (wire-binary.ts) instead. Behind the `WireCodec` interface so the transport does not
 * care how messages become bytes. (The connection handshake is the transport's: handshake.ts.)
 *
 *   append:          [1, from, to, term, prevIndex, prevTerm, commit, [[index, term, data|null], ...]]
 *   append-response: [2, from, to, term, success, matchIndex, rejectedPrev, hintIndex, recovering?, recoveryRound?]
 *   vote:            [3, from, to, term, pre, lastIndex, lastTerm, blank?, blankRound?]
 *   vote-response:   [4, from, to, term, pre, granted, blank?, blankRound?]
 *   snapshot:        [5, from, to, term, index, snapTerm, data]
 *   heartbeat:       [6, from, to, term, commit, recovered?, recoveryRound?]
 *   heartbeat-resp:  [7, from, to, term]
 *
 * Decoding refuses terms and indexes outside the safe integers (UnsafeNumberError).
 */

import { decodeValue, encodeValue } from '../../codec/index.js';
import type { AmqpValue } from '../../codec/values.js';
import type { ByteWriter } from '../../common/byte-writer.js';
import { ReplicationError } from './errors.js';
import { type Entry, type Message, snapshotBytes } from './raft/types.js';
import { assertSafeMessage } from './safe-numbers.js';
import { blankFields, recoveredFields, recoveringFields, type WireFlag } from './wire-flags.js';

export interface WireCodec {
  encodeMessage(m: Message): Uint8Array;
  /**
   * Writes what encodeMessage returns at the writer's position instead, so a transport can
   * gather one turn's messages in a buffer it reuses (no buffer per message). Optional.
   */
  encodeInto?(m: Message, w: ByteWriter): void;
  decodeMessage(bytes: Uint8Array): Message;
  /**
   * Messages the codec's owner handles itself rather than Raft (the cluster's peer messages):
   * called by the transport once the sender is checked against the authenticated member; true
   * when it took the message.
   */
  consume?(m: Message): boolean;
}

function bad(what: string): never {
  throw new ReplicationError('amqp:decode-error', `replication wire: ${what}`);
}

/** A decoded integer: plain number, or a Typed wrapper (long within int32 decodes wrapped). */
/** A trailing flag and the round it names, as trailing fields (both optional). */
function flagFields(on: boolean | undefined, round: number | undefined): AmqpValue[] {
  if (!on) return [];
  return round === undefined ? [true] : [true, round];
}

/** The flag at `at` and its round: undefined when the flag is absent. */
function flagOf(f: AmqpValue[], at: number): WireFlag | undefined {
  if (f[at] !== true) return undefined;
  return f[at + 1] === undefined ? {} : { round: num(f[at + 1]!) };
}

function num(v: AmqpValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v !== null && typeof v === 'object' && 'type' in v && 'value' in v) {
    const x = (v as { value: unknown }).value;
    if (typeof x === 'number') return x;
    if (typeof x === 'bigint') return Number(x);
  }
  return bad(`expected a number, got ${String(v)}`);
}

function str(v: AmqpValue): string {
  return typeof v === 'string' ? v : bad('expected a string');
}

function bool(v: AmqpValue): boolean {
  return typeof v === 'boolean' ? v : bad('expected a boolean');
}

function bin(v: AmqpValue): Uint8Array {
  return v instanceof Uint8Array ? v : bad('expected binary');
}

function list(v: AmqpValue): AmqpValue[] {
  return Array.isArray(v) ? v : bad('expected a list');
}

function encodeEntries(entries: readonly Entry[]): AmqpValue[] {
  return entries.map((e) => [e.index, e.term, e.data]);
}

function decodeEntries(v: AmqpValue): Entry[] {
  return list(v).map((x) => {
    const f = list(x);
    return {
      index: num(f[0]),
      term: num(f[1]),
      data: f[2] === null || f[2] === undefined ? null : bin(f[2]),
    };
  });
}

export const amqpWireCodec: WireCodec = {
  encodeMessage(m: Message): Uint8Array {
    switch (m.type) {
      case 'append':
        return encodeValue([
          1,
          m.from,
          m.to,
          m.term,
          m.prevIndex,
          m.prevTerm,
          m.commit,
          encodeEntries(m.entries),
        ]);
      case 'append-response':
        return encodeValue([
          2,
          m.from,
          m.to,
          m.term,
          m.success,
          m.matchIndex,
          m.rejectedPrev,
          m.hintIndex,
          ...flagFields(m.recovering, m.recoveryRound),
        ]);
      case 'vote':
        return encodeValue([
          3,
          m.from,
          m.to,
          m.term,
          m.pre,
          m.lastIndex,
          m.lastTerm,
          ...flagFields(m.blank, m.blankRound),
        ]);
      case 'vote-response':
        return encodeValue([4, m.from, m.to, m.term, m.pre, m.granted, ...flagFields(m.blank, m.blankRound)]);
      case 'snapshot':
        return encodeValue([
          5,
          m.from,
          m.to,
          m.term,
          m.snapshot.index,
          m.snapshot.term,
          snapshotBytes(m.snapshot.data),
        ]);
      case 'heartbeat':
        return encodeValue([6, m.from, m.to, m.term, m.commit, ...flagFields(m.recovered, m.recoveryRound)]);
      case 'heartbeat-response':
        return encodeValue([7, m.from, m.to, m.term]);
    }
  },

  decodeMessage(bytes: Uint8Array): Message {
    const m = decodeAmqpMessage(bytes);
    assertSafeMessage('replication wire', m);
    return m;
  },
};

function decodeAmqpMessage(bytes: Uint8Array): Message {
  const f = list(decodeValue(bytes));
  const from = str(f[1]);
  const to = str(f[2]);
  const term = num(f[3]);
  switch (num(f[0])) {
    case 1:
      return {
        type: 'append',
        from,
        to,
        term,
        prevIndex: num(f[4]),
        prevTerm: num(f[5]),
        commit: num(f[6]),
        entries: decodeEntries(f[7]),
      };
    case 2:
      return {
        type: 'append-response',
        from,
        to,
        term,
        success: bool(f[4]),
        matchIndex: num(f[5]),
        rejectedPrev: num(f[6]),
        hintIndex: num(f[7]),
        ...recoveringFields(flagOf(f, 8)),
      };
    case 3:
      return {
        type: 'vote',
        from,
        to,
        term,
        pre: bool(f[4]),
        lastIndex: num(f[5]),
        lastTerm: num(f[6]),
        ...blankFields(flagOf(f, 7)),
      };
    case 4:
      return {
        type: 'vote-response',
        from,
        to,
        term,
        pre: bool(f[4]),
        granted: bool(f[5]),
        ...blankFields(flagOf(f, 6)),
      };
    case 5:
      return {
        type: 'snapshot',
        from,
        to,
        term,
        snapshot: { index: num(f[4]), term: num(f[5]), data: bin(f[6]) },
      };
    case 6:
      return {
        type: 'heartbeat',
        from,
        to,
        term,
        commit: num(f[4]),
        ...recoveredFields(flagOf(f, 5)),
      };
    case 7:
      return { type: 'heartbeat-response', from, to, term };
    default:
      return bad(`unknown message type ${String(f[0])}`);
  }
}
