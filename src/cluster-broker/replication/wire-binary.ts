/**
 * A compact hand-rolled binary WireCodec (fallback and comparison for the AMQP-value codec).
 * Layout: u8 type, then fields; numbers as f64 (exact for indexes/terms < 2^53), strings and
 * payloads as u32 length + bytes; a payload length of 0xffffffff means null (no-op entry).
 * An append-response may end with one more byte (1: the follower is recovering), a vote or
 * vote-response with one more byte (1: the sender's store is blank), a heartbeat with one more
 * byte (1: the recovering follower has caught up). Decoding
 * refuses terms and indexes outside the safe integers (UnsafeNumberError).
 */
import { ReplicationError } from './errors.js';
import { assertSafeMessage } from './safe-numbers.js';
import type { Entry, Message } from './types.js';
import type { WireCodec } from './wire.js';

const enc = new TextEncoder();
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

class Out {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }
  need(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
    this.view = new DataView(b.buffer);
  }
  u8(v: number): void {
    this.need(1);
    this.buf[this.pos++] = v;
  }
  num(v: number): void {
    this.need(8);
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
  }
  bytes(b: Uint8Array | null): void {
    this.need(4 + (b ? b.length : 0));
    this.view.setUint32(this.pos, b ? b.length : NULL_LEN);
    this.pos += 4;
    if (b) {
      this.buf.set(b, this.pos);
      this.pos += b.length;
    }
  }
  str(s: string): void {
    this.bytes(enc.encode(s));
  }
  done(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

class In {
  private view: DataView;
  pos = 0;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private need(n: number): void {
    if (this.pos + n > this.buf.length)
      throw new ReplicationError('amqp:decode-error', 'replication wire: truncated');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  num(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos);
    this.pos += 8;
    return v;
  }
  bytes(): Uint8Array | null {
    this.need(4);
    const n = this.view.getUint32(this.pos);
    this.pos += 4;
    if (n === NULL_LEN) return null;
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  str(): string {
    const b = this.bytes();
    if (b === null) throw new ReplicationError('amqp:decode-error', 'replication wire: null string');
    return dec.decode(b);
  }
  bool(): boolean {
    return this.u8() === 1;
  }
  remaining(): number {
    return this.buf.length - this.pos;
  }
}

export const binaryWireCodec: WireCodec = {
  encodeMessage(m: Message): Uint8Array {
    const size =
      m.type === 'append' ? 64 + m.entries.reduce((n, e) => n + 24 + (e.data?.length ?? 0), 0) : 64;
    const o = new Out(m.type === 'snapshot' ? 64 + m.snapshot.data.length : size);
    o.u8(TYPE_CODES[m.type]);
    o.str(m.from);
    o.str(m.to);
    o.num(m.term);
    switch (m.type) {
      case 'append':
        o.num(m.prevIndex);
        o.num(m.prevTerm);
        o.num(m.commit);
        o.num(m.entries.length);
        for (const e of m.entries) {
          o.num(e.index);
          o.num(e.term);
          o.bytes(e.data);
        }
        break;
      case 'append-response':
        o.u8(m.success ? 1 : 0);
        o.num(m.matchIndex);
        o.num(m.rejectedPrev);
        o.num(m.hintIndex);
        if (m.recovering) o.u8(1);
        break;
      case 'vote':
        o.u8(m.pre ? 1 : 0);
        o.num(m.lastIndex);
        o.num(m.lastTerm);
        if (m.blank) o.u8(1);
        break;
      case 'vote-response':
        o.u8(m.pre ? 1 : 0);
        o.u8(m.granted ? 1 : 0);
        if (m.blank) o.u8(1);
        break;
      case 'snapshot':
        o.num(m.snapshot.index);
        o.num(m.snapshot.term);
        o.bytes(m.snapshot.data);
        break;
      case 'heartbeat':
        o.num(m.commit);
        if (m.recovered) o.u8(1);
        break;
      case 'heartbeat-response':
        break;
    }
    return o.done();
  },

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
  const term = i.num();
  switch (type) {
    case 1: {
      const prevIndex = i.num();
      const prevTerm = i.num();
      const commit = i.num();
      const n = i.num();
      const entries: Entry[] = [];
      for (let k = 0; k < n; k++) entries.push({ index: i.num(), term: i.num(), data: i.bytes() });
      return { type: 'append', from, to, term, prevIndex, prevTerm, commit, entries };
    }
    case 2: {
      const success = i.bool();
      const matchIndex = i.num();
      const rejectedPrev = i.num();
      const hintIndex = i.num();
      const recovering = i.remaining() > 0 && i.u8() === 1;
      return {
        type: 'append-response',
        from,
        to,
        term,
        success,
        matchIndex,
        rejectedPrev,
        hintIndex,
        ...(recovering ? { recovering: true } : {}),
      };
    }
    case 3: {
      const pre = i.bool();
      const lastIndex = i.num();
      const lastTerm = i.num();
      const blank = i.remaining() > 0 && i.u8() === 1;
      return { type: 'vote', from, to, term, pre, lastIndex, lastTerm, ...(blank ? { blank: true } : {}) };
    }
    case 4: {
      const pre = i.bool();
      const granted = i.bool();
      const blank = i.remaining() > 0 && i.u8() === 1;
      return { type: 'vote-response', from, to, term, pre, granted, ...(blank ? { blank: true } : {}) };
    }
    case 5: {
      const index = i.num();
      const snapTerm = i.num();
      const data = i.bytes() ?? new Uint8Array(0);
      return { type: 'snapshot', from, to, term, snapshot: { index, term: snapTerm, data } };
    }
    case 6: {
      const commit = i.num();
      const recovered = i.remaining() > 0 && i.u8() === 1;
      return { type: 'heartbeat', from, to, term, commit, ...(recovered ? { recovered: true } : {}) };
    }
    case 7:
      return { type: 'heartbeat-response', from, to, term };
    default:
      throw new ReplicationError('amqp:decode-error', `replication wire: unknown type ${type}`);
  }
}
