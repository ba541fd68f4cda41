/**
 * Binary encoding of BrokerEvents for the event log and the Raft log.
 *
 * Layout: [version u8 = 1][type u8][leaderTime f64 BE][type-specific fields]. Integers are
 * varints, strings UTF-8 with a varint length, message bodies raw with a varint length (never
 * base64/JSON: they are the bulk of the log). decodeEvent copies message bodies out of the input,
 * so a decoded event never pins the buffer it was read from.
 */
import { ByteReaderError, VarintReader, VarintWriter } from './binary.js';
import type { BrokerEvent, EnqueueEvent, SettleEvent, SettleOutcome } from './events.js';
import { readQueueOptions, writeQueueOptions } from './options-codec.js';
import { RepeatedString } from './repeated-string.js';

export const EVENT_CODEC_VERSION = 1;

const TYPE_CODES = {
  declare: 1,
  delete: 2,
  enqueue: 3,
  acquire: 4,
  settle: 5,
  'release-consumer': 6,
  'release-all': 7,
  expire: 8,
  commit: 9,
  'owner-attached': 10,
  'owner-lost': 11,
  'hold-unsettled': 12,
  // a new code: stores written before purge never hold it, so they read unchanged
  purge: 13,
} as const;

const ENQ_DEDUP = 1;
const ENQ_EXPIRES = 2;
const ENQ_DELIVERY_COUNT = 4;

/** The queue of the enqueue read last: a publisher's messages to one queue follow each other. */
const lastEnqueueQueue = new RepeatedString();

export class EventDecodeError extends ByteReaderError {
  constructor(description: string) {
    super(description);
    this.name = 'EventDecodeError';
  }
}

/** About the bytes `e` encodes to, to size a writer (it grows when it is more). */
export function eventSizeHint(e: BrokerEvent): number {
  return e.type === 'enqueue' ? e.message.length + 64 + e.queue.length * 3 : 64;
}

export function encodeEvent(e: BrokerEvent): Uint8Array {
  const w = new VarintWriter(eventSizeHint(e));
  writeEvent(w, e);
  return w.finish();
}

/**
 * Appends the encoding of `e` to `w` (what encodeEvent returns, written where the caller wants
 * it: the single node's store encodes straight into its batch buffer, no buffer per event). On a
 * throw, `w` holds a partial encoding after its previous position: the caller rewinds.
 */
export function writeEvent(w: VarintWriter, e: BrokerEvent): void {
  w.u8(EVENT_CODEC_VERSION);
  w.u8(TYPE_CODES[e.type]);
  w.f64(e.leaderTime);
  switch (e.type) {
    case 'declare':
      w.str(e.queue);
      writeQueueOptions(w, e.options);
      break;
    case 'delete':
      w.str(e.queue);
      // appended: a plain delete encodes as before
      if (e.ifOwnerLostAt !== undefined) w.f64(e.ifOwnerLostAt);
      break;
    case 'purge':
      w.str(e.queue);
      break;
    case 'owner-attached':
    case 'owner-lost':
      w.str(e.queue);
      w.str(e.holder);
      break;
    case 'hold-unsettled':
      w.str(e.consumer);
      w.str(e.link);
      w.uint(e.ms);
      break;
    case 'enqueue': {
      let flags = 0;
      if (e.dedupKey !== undefined) flags |= ENQ_DEDUP;
      if (e.expiresAt !== undefined) flags |= ENQ_EXPIRES;
      if (e.deliveryCount !== undefined) flags |= ENQ_DELIVERY_COUNT;
      w.u8(flags);
      w.str(e.queue);
      if (e.dedupKey !== undefined) w.str(e.dedupKey);
      if (e.expiresAt !== undefined) w.f64(e.expiresAt);
      if (e.deliveryCount !== undefined) w.uint(e.deliveryCount);
      w.bytes(e.message);
      break;
    }
    case 'acquire':
      w.str(e.queue);
      w.str(e.consumer);
      w.uint(e.max ?? 1);
      writeOptionalString(w, e.link);
      // appended: an acquire without seqs encodes as before
      if (e.seqs !== undefined) {
        w.uint(e.seqs.length);
        for (const s of e.seqs) w.uint(s);
      }
      break;
    case 'settle':
      w.str(e.consumer);
      w.uint(e.seqs.length);
      for (const s of e.seqs) w.uint(s);
      writeOutcome(w, e.outcome);
      writeOptionalString(w, e.link);
      break;
    case 'release-consumer':
      w.str(e.consumer);
      break;
    case 'release-all':
    case 'expire':
      break;
    case 'commit':
      w.uint(e.events.length);
      // each sub-event length-prefixed, written in place (no writer per sub-event)
      for (const sub of e.events) w.prefixed(eventSizeHint(sub), () => writeEvent(w, sub));
      break;
  }
}

function writeOptionalString(w: VarintWriter, s: string | undefined): void {
  if (s === undefined) w.u8(0);
  else {
    w.u8(1);
    w.str(s);
  }
}

function readOptionalString(r: VarintReader): string | undefined {
  const has = r.u8();
  if (has === 0) return undefined;
  if (has !== 1) throw new EventDecodeError(`bad presence byte ${has}`);
  return r.str();
}

function writeOutcome(w: VarintWriter, o: SettleOutcome): void {
  switch (o.type) {
    case 'accepted':
      w.u8(1);
      break;
    case 'rejected':
      w.u8(2);
      if (o.error === undefined) w.u8(0);
      else {
        w.u8(o.error.description === undefined ? 1 : 2);
        w.str(o.error.condition);
        if (o.error.description !== undefined) w.str(o.error.description);
      }
      break;
    case 'released':
      w.u8(3);
      break;
    case 'modified':
      w.u8(4);
      w.u8((o.deliveryFailed ? 1 : 0) | (o.undeliverableHere ? 2 : 0));
      break;
  }
}

function readOutcome(r: VarintReader): SettleOutcome {
  const code = r.u8();
  switch (code) {
    case 1:
      return { type: 'accepted' };
    case 2: {
      const has = r.u8();
      if (has === 0) return { type: 'rejected' };
      const condition = r.str();
      if (has === 1) return { type: 'rejected', error: { condition } };
      return { type: 'rejected', error: { condition, description: r.str() } };
    }
    case 3:
      return { type: 'released' };
    case 4: {
      const f = r.u8();
      const o: SettleOutcome = { type: 'modified' };
      if (f & 1) o.deliveryFailed = true;
      if (f & 2) o.undeliverableHere = true;
      return o;
    }
    default:
      throw new EventDecodeError(`unknown outcome code ${code}`);
  }
}

/**
 * How a decoded enqueue holds its message: `copy` (its own bytes, the default: the event may
 * outlive `bytes`) or `view` (a view of `bytes`, no allocation: for an event handed straight to
 * `BrokerState.apply`, which copies the bytes it keeps into its queues' arenas, or on a cluster
 * member keeps them as views of its committed entry: byte-arena.ts).
 */
export type MessageBytes = 'copy' | 'view';

export function decodeEvent(bytes: Uint8Array, messages: MessageBytes = 'copy'): BrokerEvent {
  return readEvent(new VarintReader(bytes), messages);
}

/**
 * decodeEvent of the bytes from the reader's position to its end: a cluster entry carries its
 * event last, so applying it takes one reader for both (entry-codec.ts).
 */
export function readEvent(r: VarintReader, messages: MessageBytes): BrokerEvent {
  const version = r.u8();
  if (version !== EVENT_CODEC_VERSION) throw new EventDecodeError(`unsupported event version ${version}`);
  const code = r.u8();
  const leaderTime = r.f64();
  let e: BrokerEvent;
  switch (code) {
    case TYPE_CODES.declare: {
      const queue = r.str();
      e = { type: 'declare', leaderTime, queue, options: readQueueOptions(r) };
      break;
    }
    case TYPE_CODES.delete: {
      const d: BrokerEvent = { type: 'delete', leaderTime, queue: r.str() };
      if (r.remaining > 0) d.ifOwnerLostAt = r.f64();
      e = d;
      break;
    }
    case TYPE_CODES.purge:
      e = { type: 'purge', leaderTime, queue: r.str() };
      break;
    case TYPE_CODES['owner-attached']:
      e = { type: 'owner-attached', leaderTime, queue: r.str(), holder: r.str() };
      break;
    case TYPE_CODES['owner-lost']:
      e = { type: 'owner-lost', leaderTime, queue: r.str(), holder: r.str() };
      break;
    case TYPE_CODES['hold-unsettled']:
      e = { type: 'hold-unsettled', leaderTime, consumer: r.str(), link: r.str(), ms: r.uint() };
      break;
    case TYPE_CODES.enqueue: {
      const flags = r.u8();
      const queue = r.strRepeated(lastEnqueueQueue);
      const dedupKey = flags & ENQ_DEDUP ? r.str() : undefined;
      const expiresAt = flags & ENQ_EXPIRES ? r.f64() : undefined;
      const deliveryCount = flags & ENQ_DELIVERY_COUNT ? r.uint() : undefined;
      const message = messages === 'view' ? r.bytesView() : r.bytesCopy();
      e = { type: 'enqueue', leaderTime, queue, message };
      if (dedupKey !== undefined) e.dedupKey = dedupKey;
      if (expiresAt !== undefined) e.expiresAt = expiresAt;
      if (deliveryCount !== undefined) e.deliveryCount = deliveryCount;
      break;
    }
    case TYPE_CODES.acquire: {
      const queue = r.str();
      const consumer = r.str();
      const max = r.uint();
      const link = readOptionalString(r);
      const a: BrokerEvent =
        link === undefined
          ? { type: 'acquire', leaderTime, queue, consumer, max }
          : { type: 'acquire', leaderTime, queue, consumer, max, link };
      if (r.remaining > 0) {
        const n = r.uint();
        if (n > r.remaining) throw new EventDecodeError('acquire seq count exceeds input');
        const seqs: number[] = new Array(n);
        for (let i = 0; i < n; i++) seqs[i] = r.uint();
        a.seqs = seqs;
      }
      e = a;
      break;
    }
    case TYPE_CODES.settle: {
      const consumer = r.str();
      const n = r.uint();
      if (n > r.remaining) throw new EventDecodeError('settle seq count exceeds input');
      const seqs: number[] = new Array(n);
      for (let i = 0; i < n; i++) seqs[i] = r.uint();
      const outcome = readOutcome(r);
      const link = readOptionalString(r);
      e =
        link === undefined
          ? { type: 'settle', leaderTime, consumer, seqs, outcome }
          : { type: 'settle', leaderTime, consumer, seqs, outcome, link };
      break;
    }
    case TYPE_CODES['release-consumer']:
      e = { type: 'release-consumer', leaderTime, consumer: r.str() };
      break;
    case TYPE_CODES['release-all']:
      e = { type: 'release-all', leaderTime };
      break;
    case TYPE_CODES.expire:
      e = { type: 'expire', leaderTime };
      break;
    case TYPE_CODES.commit: {
      const n = r.uint();
      if (n > r.remaining) throw new EventDecodeError('commit event count exceeds input');
      const events: Array<EnqueueEvent | SettleEvent> = [];
      for (let i = 0; i < n; i++) {
        const sub = decodeEvent(messages === 'view' ? r.bytesView() : r.bytesCopy(), messages);
        if (sub.type !== 'enqueue' && sub.type !== 'settle')
          throw new EventDecodeError(`a commit cannot carry a ${sub.type} event`);
        events.push(sub);
      }
      e = { type: 'commit', leaderTime, events };
      break;
    }
    default:
      throw new EventDecodeError(`unknown event type code ${code}`);
  }
  r.end();
  return e;
}
