/**
 * A message's life in a BrokerState: its bytes kept and its record made, held by a consumer,
 * let go, retired, expired. The steps every event handler shares, as free functions over the
 * state's maps (called per message: no object or closure made per call).
 */

import type { BrokerState } from './broker-state.js';
import { type ByteArena, type StoredBytes, storeCopy } from './byte-arena.js';
import type { Queue } from './queue.js';
import { QueuedMessage } from './queued-message.js';
import type { ExpireResult } from './results.js';

/** An enqueued message's bytes as kept: a view (EntryViews), else a copy into `arena` or of its own. */
export function keep(s: BrokerState, message: Uint8Array, arena: ByteArena | undefined): StoredBytes {
  if (s.views !== undefined) return s.views.keep(message, arena);
  return storeCopy(message, arena);
}

/** A new message record of `q` (not yet added to it), in the expiry heap when it has a deadline. */
export function newMessage(
  s: BrokerState,
  q: Queue,
  bytes: StoredBytes,
  expiresAt: number,
  deliveryCount: number,
  seq = s.nextSeq++,
): QueuedMessage {
  const m = new QueuedMessage(q, seq, bytes, expiresAt, deliveryCount);
  if (expiresAt >= 0) s.expiry.push(m);
  return m;
}

/** The messages `consumer` holds (created empty when it holds none). */
export function heldBy(s: BrokerState, consumer: string): Map<number, QueuedMessage> {
  let held = s.consumers.get(consumer);
  if (!held) {
    held = new Map();
    s.consumers.set(consumer, held);
  }
  return held;
}

/** `consumer` holds `m` (acquired, not settled); `held` is heldBy(consumer). */
export function hold(q: Queue, m: QueuedMessage, consumer: string, held: Map<number, QueuedMessage>): void {
  m.owner = consumer;
  q.acquired.pushBack(m);
  held.set(m.seq, m);
}

/** `m` is no longer held by `consumer`; `held` is what it holds, when the caller has it at hand. */
export function forgetAcquired(
  s: BrokerState,
  m: QueuedMessage,
  consumer: string,
  held = s.consumers.get(consumer),
): Queue {
  const q = m.queue;
  q.acquired.remove(m);
  if (held) {
    held.delete(m.seq);
    if (held.size === 0) s.consumers.delete(consumer);
  }
  return q;
}

/** Ends a message's life; `popped` when its expiry-heap entry was already removed. */
export function retire(s: BrokerState, m: QueuedMessage, popped = false): void {
  if (!m.live) return;
  unreserve(m.queue, m);
  if (m.expiresAt >= 0 && !popped) s.expiry.noteDead();
  m.kill();
}

export function unreserve(q: Queue, m: QueuedMessage): void {
  if (m.reservation === undefined) return;
  m.reservation = undefined;
  q.reserved.delete(m);
}

/** The `expire` event: drops available messages past their deadline, trims dedup windows. */
export function expire(s: BrokerState): ExpireResult {
  const expired: number[] = [];
  for (let top = s.expiry.peek(); top !== undefined && top.expiresAt <= s.now; top = s.expiry.peek()) {
    s.expiry.pop();
    if (!top.live) s.expiry.deadPopped();
    // Acquired messages are judged again when they come back (makeAvailable).
    if (!top.live || top.owner !== undefined) continue;
    const q = top.queue;
    q.available.remove(top);
    q.uncount(top);
    retire(s, top, true);
    expired.push(top.seq);
  }
  for (const q of s.queues.values()) q.dedup.trim(s.now);
  expired.sort((a, b) => a - b);
  return { type: 'expire', expired };
}
