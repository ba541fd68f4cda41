/**
 * A publish to a topic (docs/topics.md): one message into every subscription whose selector
 * takes it, all sharing one copy of the bytes.
 */

import type { BrokerState } from './broker-state.js';
import type { StoredBytes } from './byte-arena.js';
import type { EnqueueEvent } from './events.js';
import { keep, newMessage } from './message-life.js';
import type { Queue } from './queue.js';
import { type EnqueueResult, refused } from './results.js';

/** The subscriptions of topic `t` whose selectors take `message` (each evaluated once). */
export function matchingSubscriptions(s: BrokerState, t: Queue, message: Uint8Array): Queue[] {
  return (s.subscriptions.get(t.name) ?? []).filter((sub) => sub.accepts(message));
}

/**
 * One publish to a topic: a message in every matching subscription, all sharing one copy of
 * the bytes; refused as a whole when any of them is full (docs/topics.md#commit-point). Its
 * dedup key, if any, is already admitted to the topic's window (withdrawn when refused).
 */
export function publish(s: BrokerState, t: Queue, e: EnqueueEvent, targets: Queue[]): EnqueueResult {
  for (const sub of targets) {
    const full = sub.limitExceeded(e.message.length);
    if (full === undefined) continue;
    if (e.dedupKey !== undefined) t.dedup.withdraw(e.dedupKey);
    return refused('enqueue', 'amqp:resource-limit-exceeded', full);
  }
  let first = 0;
  const bytes = targets.length > 0 ? publishedBytes(s, t, targets, e.message) : undefined;
  for (const sub of targets) {
    const m = newMessage(s, sub, bytes!, e.expiresAt ?? -1, e.deliveryCount ?? 0);
    if (first === 0) first = m.seq;
    sub.add(m);
  }
  t.addedCount++;
  return { type: 'enqueue', status: 'enqueued', seq: first, fannedOut: targets.map((sub) => sub.name) };
}

/**
 * Where a publish's one copy goes (docs/architecture.md#message-memory): into the topic's
 * chunks when every subscription takes it (then all messages in those chunks have the same
 * holders, so a chunk is freed once all of them consumed it), into the one subscription's when a
 * selector left one, else a copy of its own (a chunk shared by messages with different holders
 * would stay alive as long as the slowest holder of any of them).
 */
function publishedBytes(s: BrokerState, t: Queue, targets: Queue[], message: Uint8Array): StoredBytes {
  if (targets.length === 1) return keep(s, message, targets[0]!.arena);
  if (targets.length === (s.subscriptions.get(t.name)?.length ?? 0)) return keep(s, message, t.arena);
  return keep(s, message, undefined);
}
