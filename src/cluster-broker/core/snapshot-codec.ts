/**
 * Deterministic binary snapshot of a BrokerState. Two states that applied the same events give
 * byte-identical snapshots: queues in declaration order, each queue's messages in seq order
 * (available and acquired together), dedup entries in log order. Derived structures (consumer
 * index, expiry heap) are rebuilt on restore, not stored.
 *
 * Layout: [magic 'QBS1'][now f64][nextSeq][queue count] then per queue: name, options, message
 * count, messages, dedup count, dedup entries (key, time f64).
 * Message: seq, flags u8, [expiresAt f64], deliveryCount, [owner], [undeliverable list],
 * [dead-letter: fromQueue, error?], then its bytes, or (F_SHARED) the seq of the message written
 * earlier that holds the same bytes: one publish to a topic shares one copy between its
 * subscriptions (docs/topics.md#commit-point), and a restored state shares it the same way.
 * Then, only when some temporary queue has an owner record or a hold section follows (so older
 * snapshots, which end after the queues, still load): record count, then per record: queue name,
 * kind u8 (1 = held by a process: holder string; 2 = owner lost: leader time f64).
 * Then, only when some consumer asked for a hold or some message is reserved
 * (docs/delivery-contract.md#held-unsettled): hold count, per hold (by consumer key): consumer,
 * link, ms; reservation count, per reservation (by seq): queue name, seq, link, until f64.
 */
import { ByteReaderError, VarintReader, VarintWriter } from './binary.js';
import type { BrokerState } from './broker-state.js';
import type { StoredBytes } from './byte-arena.js';
import { ExpiryHeap } from './expiry-heap.js';
import { heldBy, hold, newMessage } from './message-life.js';
import { readQueueOptions, writeQueueOptions } from './options-codec.js';
import { Queue } from './queue.js';
import { addQueue } from './queue-lifecycle.js';
import type { QueuedMessage } from './queued-message.js';

const MAGIC = [0x51, 0x42, 0x53, 0x31]; // 'QBS1'

const F_ACQUIRED_BEFORE = 1;
const F_EXPIRES = 2;
const F_OWNER = 4;
const F_UNDELIVERABLE = 8;
const F_DEAD_LETTER = 16;
const F_DL_ERROR = 32;
const F_DL_DESCRIPTION = 64;
const F_SHARED = 128;

const OWNER_HELD = 1;
const OWNER_LOST = 2;

function queueMessagesInSeqOrder(q: Queue): QueuedMessage[] {
  const acquired = q.acquired.toArray().sort((a, b) => a.seq - b.seq);
  const out: QueuedMessage[] = [];
  let i = 0;
  for (let m = q.available.head; m; m = m.next) {
    while (i < acquired.length && acquired[i].seq < m.seq) out.push(acquired[i++]);
    out.push(m);
  }
  while (i < acquired.length) out.push(acquired[i++]);
  return out;
}

/** The snapshot as one buffer (what a Raft snapshot carries). */
export function writeSnapshot(s: BrokerState): Uint8Array {
  let size = 64;
  for (const q of s.queues.values()) size += q.byteCount + q.messageCount * 24 + q.dedup.size * 48;
  const w = new VarintWriter(size);
  encodeSnapshot(s, w);
  return w.finish();
}

/**
 * The same bytes as writeSnapshot, as parts to be written one after the other: message bytes of
 * at least BY_REFERENCE_BYTES are views of the queues' stored bytes, not copies. Stored bytes
 * never change once stored (byte-arena.ts), so the parts stay the snapshot of this moment
 * however the state moves on while they are written; the store's compaction writes them in the
 * background instead of first copying the whole live state into one buffer on the event loop.
 */
export function writeSnapshotParts(s: BrokerState): Uint8Array[] {
  const w = new PartsWriter();
  encodeSnapshot(s, w);
  return w.parts();
}

/** Shorter message bytes are copied in with their metadata: a part of their own costs more. */
const BY_REFERENCE_BYTES = 256;
const PART_BUFFER_BYTES = 64 * 1024;

/**
 * A VarintWriter that hands out what it wrote as parts: long byte strings are referenced, not
 * copied. Growing starts a new buffer holding only what is not handed out yet, so parts already
 * cut (views of the old buffer) stay as they are.
 */
class PartsWriter extends VarintWriter {
  private readonly out: Uint8Array[] = [];
  private partStart = 0;

  constructor() {
    super(PART_BUFFER_BYTES);
  }

  override ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const pending = this.buf.subarray(this.partStart, this.pos);
    const next = Buffer.allocUnsafeSlow(Math.max(PART_BUFFER_BYTES, 2 * (pending.length + n)));
    next.set(pending, 0);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
    this.pos = pending.length;
    this.partStart = 0;
  }

  override bytes(v: Uint8Array): void {
    if (v.length < BY_REFERENCE_BYTES) {
      super.bytes(v);
      return;
    }
    this.uint(v.length);
    this.cut();
    this.out.push(v);
  }

  parts(): Uint8Array[] {
    this.cut();
    return this.out;
  }

  private cut(): void {
    if (this.pos > this.partStart) this.out.push(this.buf.subarray(this.partStart, this.pos));
    this.partStart = this.pos;
  }
}

function encodeSnapshot(s: BrokerState, w: VarintWriter): void {
  for (const b of MAGIC) w.u8(b);
  w.f64(s.now);
  w.uint(s.nextSeq);
  w.uint(s.queues.size);
  /** The seq of the first message written with these bytes (shared bytes are written once). */
  const writtenAs: WrittenAs = new Map();
  for (const q of s.queues.values()) {
    w.str(q.name);
    writeQueueOptions(w, q.options);
    const msgs = queueMessagesInSeqOrder(q);
    w.uint(msgs.length);
    for (const m of msgs) writeMessage(w, m, writtenAs);
    w.uint(q.dedup.size);
    for (const [key, time] of q.dedup.entries()) {
      w.str(key);
      w.f64(time);
    }
  }
  const owned = s.ownedQueues();
  const holds = [...s.holds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const reserved: QueuedMessage[] = [];
  for (const q of s.queues.values()) for (const m of q.reserved) if (m.reservation) reserved.push(m);
  reserved.sort((a, b) => a.seq - b.seq);
  const holdSection = holds.length > 0 || reserved.length > 0;
  if (owned.length > 0 || holdSection) {
    w.uint(owned.length);
    for (const o of owned) {
      w.str(o.queue);
      if (o.holder !== undefined) {
        w.u8(OWNER_HELD);
        w.str(o.holder);
      } else {
        w.u8(OWNER_LOST);
        w.f64(o.ownerLostAt!);
      }
    }
  }
  if (holdSection) {
    w.uint(holds.length);
    for (const [consumer, h] of holds) {
      w.str(consumer);
      w.str(h.link);
      w.uint(h.ms);
    }
    w.uint(reserved.length);
    for (const m of reserved) {
      w.str(m.queue.name);
      w.uint(m.seq);
      w.str(m.reservation!.link);
      w.f64(m.reservation!.until);
    }
  }
}

/** Seq of the message whose bytes were written first, by chunk and place (a topic's subscriptions share them). */
type WrittenAs = Map<Uint8Array, Map<number, number>>;

function writeMessage(w: VarintWriter, m: QueuedMessage, writtenAs: WrittenAs): void {
  // an empty message has no bytes to share (and several may sit at one place in a chunk)
  const sharedWith = m.size === 0 ? undefined : writtenAs.get(m.chunk)?.get(m.at);
  let flags = sharedWith === undefined ? 0 : F_SHARED;
  if (m.acquiredBefore) flags |= F_ACQUIRED_BEFORE;
  if (m.expiresAt >= 0) flags |= F_EXPIRES;
  if (m.owner !== undefined) flags |= F_OWNER;
  if (m.undeliverable !== undefined) flags |= F_UNDELIVERABLE;
  if (m.deadLetter !== undefined) {
    flags |= F_DEAD_LETTER;
    if (m.deadLetter.error !== undefined) {
      flags |= F_DL_ERROR;
      if (m.deadLetter.error.description !== undefined) flags |= F_DL_DESCRIPTION;
    }
  }
  w.uint(m.seq);
  w.u8(flags);
  if (flags & F_EXPIRES) w.f64(m.expiresAt);
  w.uint(m.deliveryCount);
  if (m.owner !== undefined) w.str(m.owner);
  if (m.undeliverable !== undefined) {
    w.uint(m.undeliverable.length);
    for (const c of m.undeliverable) w.str(c);
  }
  if (m.deadLetter !== undefined) {
    w.str(m.deadLetter.fromQueue);
    if (m.deadLetter.error !== undefined) {
      w.str(m.deadLetter.error.condition);
      if (m.deadLetter.error.description !== undefined) w.str(m.deadLetter.error.description);
    }
  }
  if (sharedWith !== undefined) w.uint(sharedWith);
  else {
    const inChunk = writtenAs.get(m.chunk) ?? new Map<number, number>();
    writtenAs.set(m.chunk, inChunk);
    inChunk.set(m.at, m.seq);
    w.bytes(m.bytes);
  }
}

export function readSnapshot(s: BrokerState, bytes: Uint8Array): void {
  const r = new VarintReader(bytes);
  for (const b of MAGIC) if (r.u8() !== b) throw new ByteReaderError('not a broker state snapshot');
  const now = r.f64();
  const nextSeq = r.uint();
  s.queues = new Map();
  s.subscriptions = new Map();
  s.consumers = new Map();
  s.expiry = new ExpiryHeap();
  s.now = now;
  s.nextSeq = nextSeq;
  s.appliedCount = 0;
  const queueCount = r.uint();
  const bytesBySeq = new Map<number, StoredBytes>();
  for (let qi = 0; qi < queueCount; qi++) {
    const name = r.str();
    const q = new Queue(name, readQueueOptions(r));
    addQueue(s, q);
    const n = r.uint();
    for (let i = 0; i < n; i++) {
      const seq = r.uint();
      const flags = r.u8();
      const expiresAt = flags & F_EXPIRES ? r.f64() : -1;
      const deliveryCount = r.uint();
      const owner = flags & F_OWNER ? r.str() : undefined;
      let undeliverable: string[] | undefined;
      if (flags & F_UNDELIVERABLE) {
        const k = r.uint();
        undeliverable = [];
        for (let j = 0; j < k; j++) undeliverable.push(r.str());
      }
      let deadLetter: QueuedMessage['deadLetter'];
      if (flags & F_DEAD_LETTER) {
        deadLetter = { fromQueue: r.str() };
        if (flags & F_DL_ERROR) {
          const condition = r.str();
          deadLetter.error = flags & F_DL_DESCRIPTION ? { condition, description: r.str() } : { condition };
        }
      }
      let bytes: StoredBytes | undefined;
      if (flags & F_SHARED) {
        bytes = bytesBySeq.get(r.uint());
        if (bytes === undefined) throw new ByteReaderError('a shared message names no earlier message');
      } else {
        bytes = q.arena.store(r.bytesView());
        bytesBySeq.set(seq, bytes);
      }
      const m = newMessage(s, q, bytes, expiresAt, deliveryCount, seq);
      m.acquiredBefore = (flags & F_ACQUIRED_BEFORE) !== 0;
      m.undeliverable = undeliverable;
      m.deadLetter = deadLetter;
      q.messageCount++;
      q.byteCount += m.size;
      if (owner !== undefined) hold(q, m, owner, heldBy(s, owner));
      else q.available.pushBack(m);
    }
    const d = r.uint();
    for (let i = 0; i < d; i++) {
      const key = r.str();
      q.dedup.restoreEntry(key, r.f64());
    }
  }
  s.holds = new Map();
  if (r.remaining > 0) readOwners(s, r);
  if (r.remaining > 0) readHolds(s, r);
  r.end();
}

function readHolds(s: BrokerState, r: VarintReader): void {
  const holds = r.uint();
  for (let i = 0; i < holds; i++) {
    const consumer = r.str();
    s.holds.set(consumer, { link: r.str(), ms: r.uint() });
  }
  const reservations = r.uint();
  for (let i = 0; i < reservations; i++) {
    const q = s.queues.get(r.str());
    const seq = r.uint();
    const reservation = { link: r.str(), until: r.f64() };
    let m = q?.available.head;
    while (m !== undefined && m.seq !== seq) m = m.next;
    if (q === undefined || m === undefined)
      throw new ByteReaderError('a reservation names no available message');
    m.reservation = reservation;
    q.reserved.add(m);
  }
}

function readOwners(s: BrokerState, r: VarintReader): void {
  const n = r.uint();
  for (let i = 0; i < n; i++) {
    const q = s.queues.get(r.str());
    if (!q) throw new ByteReaderError('an owner record names no queue');
    const kind = r.u8();
    if (kind === OWNER_HELD) q.holder = r.str();
    else if (kind === OWNER_LOST) q.ownerLostAt = r.f64();
    else throw new ByteReaderError(`unknown owner record kind ${kind}`);
  }
}
