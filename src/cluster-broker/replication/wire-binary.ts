/**
 * The cluster member's WireCodec: every cluster member encodes its Raft messages with this one
 * (assembly/member.ts). A compact hand-rolled binary layout; the AMQP-value codec in wire.ts is
 * `Replica`'s default when no codec is given (the stand-alone replication tests) and the reference
 * the codec tests compare against.
 * Layout: u8 type, then fields; numbers as f64 (exact for indexes/terms < 2^53), strings and
 * payloads as u32 length + bytes; a payload length of 0xffffffff means null (no-op entry).
 * Some messages end with a flag byte (1) and then, if the flag names an incarnation of a member,
 * that round as a u32: an append-response's flag says the follower is recovering (its round: the
 * follower's incarnation), a vote or vote-response's that the sender's store is blank (its round:
 * the blank member's requests it asks or answers in), a heartbeat's that the recovering follower
 * has caught up (its round: the incarnation the news is about). Decoding
 * refuses terms and indexes outside the safe integers (UnsafeNumberError).
 */
import { ByteReader } from '../../common/byte-reader.js';
import { ByteWriter } from '../../common/byte-writer.js';
import { ReplicationError } from './errors.js';
import { type Entry, type Message, snapshotLength } from './raft/types.js';
import { assertSafeMessage } from './safe-numbers.js';
import type { WireCodec } from './wire.js';
import { blankFields, recoveredFields, recoveringFields, type WireFlag } from './wire-flags.js';

const enc = new TextEncoder();

/** A trailing flag, then the round it names (both optional). */
function putFlag(o: ByteWriter, on: boolean | undefined, round: number | undefined): void {
  if (!on) return;
  o.u8(1);
  if (round !== undefined) o.u32(round);
}

/** The trailing flag and its round: undefined when the flag is absent. */
function readFlag(i: ByteReader): WireFlag | undefined {
  if (i.remaining === 0 || i.u8() !== 1) return undefined;
  return i.remaining >= 4 ? { round: i.u32() } : {};
}
const dec = new TextDecoder();
const NULL_LEN = 0xffffffff;
const TYPE_CODES: Record<Message['type'], number> = {
  append: 1,
  'append-response': 2,
  vote: 3,
  'vote-response': 4,
  snapshot: 5,
  heartbeat: 6,
  'heartbeat-response': 7,
};

/** A u32-length byte string (NULL_LEN: null). */
function putBytes(o: ByteWriter, b: Uint8Array | null): void {
  o.u32(b ? b.length : NULL_LEN);
  if (b) o.raw(b);
}

function putStr(o: ByteWriter, s: string): void {
  putBytes(o, enc.encode(s));
}

/** The common ByteReader with this layout's encodings (the twin of putBytes and putStr). */
class In extends ByteReader {
  constructor(buf: Uint8Array) {
    super(buf, () => new ReplicationError('amqp:decode-error', 'replication wire: truncated'));
  }
  bytes(): Uint8Array | null {
    const n = this.u32();
    return n === NULL_LEN ? null : this.take(n);
  }
  str(): string {
    const b = this.bytes();
    if (b === null) throw new ReplicationError('amqp:decode-error', 'replication wire: null string');
    return dec.decode(b);
  }
  bool(): boolean {
    return this.u8() === 1;
  }
}

/** About how many bytes `m` encodes to (a writer made this big rarely grows). */
function sizeHint(m: Message): number {
  if (m.type === 'snapshot') return 64 + snapshotLength(m.snapshot.data);
  if (m.type !== 'append') return 64;
  let n = 64;
  for (const e of m.entries) n += 24 + (e.data?.length ?? 0);
  return n;
}

function encodeInto(m: Message, o: ByteWriter): void {
  o.ensure(sizeHint(m));
  o.u8(TYPE_CODES[m.type]);
  putStr(o, m.from);
  putStr(o, m.to);
  o.f64(m.term);
  switch (m.type) {
    case 'append':
      o.f64(m.prevIndex);
      o.f64(m.prevTerm);
      o.f64(m.commit);
      o.f64(m.entries.length);
      for (const e of m.entries) {
        o.f64(e.index);
        o.f64(e.term);
        putBytes(o, e.data);
      }
      break;
    case 'append-response':
      o.u8(m.success ? 1 : 0);
      o.f64(m.matchIndex);
      o.f64(m.rejectedPrev);
      o.f64(m.hintIndex);
      putFlag(o, m.recovering, m.recoveryRound);
      break;
    case 'vote':
      o.u8(m.pre ? 1 : 0);
      o.f64(m.lastIndex);
      o.f64(m.lastTerm);
      putFlag(o, m.blank, m.blankRound);
      break;
    case 'vote-response':
      o.u8(m.pre ? 1 : 0);
      o.u8(m.granted ? 1 : 0);
      putFlag(o, m.blank, m.blankRound);
      break;
    case 'snapshot':
      o.f64(m.snapshot.index);
      o.f64(m.snapshot.term);
      o.u32(snapshotLength(m.snapshot.data));
      if (m.snapshot.data instanceof Uint8Array) o.raw(m.snapshot.data);
      else for (const p of m.snapshot.data) o.raw(p);
      break;
    case 'heartbeat':
      o.f64(m.commit);
      putFlag(o, m.recovered, m.recoveryRound);
      break;
    case 'heartbeat-response':
      break;
  }
}

export const binaryWireCodec: WireCodec = {
  encodeMessage(m: Message): Uint8Array {
    const o = new ByteWriter(sizeHint(m));
    encodeInto(m, o);
    return o.written();
  },

  encodeInto,

  decodeMessage(bytes: Uint8Array): Message {
    const m = decodeBinaryMessage(bytes);
    assertSafeMessage('replication wire', m);
    return m;
  },
};

function decodeBinaryMessage(bytes: Uint8Array): Message {
  const i = new In(bytes);
  const type = i.u8();
  const from = i.str();
  const to = i.str();
  const term = i.f64();
  switch (type) {
    case 1: {
      const prevIndex = i.f64();
      const prevTerm = i.f64();
      const commit = i.f64();
      const n = i.f64();
      const entries: Entry[] = [];
      for (let k = 0; k < n; k++) entries.push({ index: i.f64(), term: i.f64(), data: i.bytes() });
      return { type: 'append', from, to, term, prevIndex, prevTerm, commit, entries };
    }
    case 2: {
      const success = i.bool();
      const matchIndex = i.f64();
      const rejectedPrev = i.f64();
      const hintIndex = i.f64();
      return {
        type: 'append-response',
        from,
        to,
        term,
        success,
        matchIndex,
        rejectedPrev,
        hintIndex,
        ...recoveringFields(readFlag(i)),
      };
    }
    case 3: {
      const pre = i.bool();
      const lastIndex = i.f64();
      const lastTerm = i.f64();
      return { type: 'vote', from, to, term, pre, lastIndex, lastTerm, ...blankFields(readFlag(i)) };
    }
    case 4: {
      const pre = i.bool();
      const granted = i.bool();
      return { type: 'vote-response', from, to, term, pre, granted, ...blankFields(readFlag(i)) };
    }
    case 5: {
      const index = i.f64();
      const snapTerm = i.f64();
      const data = i.bytes() ?? new Uint8Array(0);
      return { type: 'snapshot', from, to, term, snapshot: { index, term: snapTerm, data } };
    }
    case 6: {
      const commit = i.f64();
      return { type: 'heartbeat', from, to, term, commit, ...recoveredFields(readFlag(i)) };
    }
    case 7:
      return { type: 'heartbeat-response', from, to, term };
    default:
      throw new ReplicationError('amqp:decode-error', `replication wire: unknown type ${type}`);
  }
}
