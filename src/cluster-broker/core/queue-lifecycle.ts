/**
 * Queues coming and going: `declare` (idempotent; a subscription's topic exists from its first
 * subscription on), `delete` (optionally only if the owner is still lost), `purge`, and the owner
 * records of temporary queues (`owner-attached`, `owner-lost`, docs/topics.md#owner-gone).
 */

import type { BrokerState } from './broker-state.js';
import type {
  DeclareQueueEvent,
  DeleteQueueEvent,
  OwnerAttachedEvent,
  OwnerLostEvent,
  PurgeQueueEvent,
} from './events.js';
import { forgetAcquired, retire } from './message-life.js';
import { Queue } from './queue.js';
import type { DeclareResult, DeleteResult, OwnerResult, PurgeResult } from './results.js';

export function declare(s: BrokerState, e: DeclareQueueEvent): DeclareResult {
  if (s.queues.has(e.queue)) return { type: 'declare', created: false };
  const topic = e.options.subscription?.topic;
  // a subscription's topic exists from its first subscription on
  if (topic !== undefined && !s.queues.has(topic)) s.queues.set(topic, new Queue(topic, { topic: true }));
  addQueue(s, new Queue(e.queue, e.options));
  return { type: 'declare', created: true };
}

/** Registers a queue (and a subscription with its topic); also used by restore. */
export function addQueue(s: BrokerState, q: Queue): void {
  s.queues.set(q.name, q);
  const topic = q.options.subscription?.topic;
  if (topic === undefined) return;
  const subs = s.subscriptions.get(topic);
  if (subs) subs.push(q);
  else s.subscriptions.set(topic, [q]);
}

export function deleteQueue(s: BrokerState, e: DeleteQueueEvent): DeleteResult {
  const name = e.queue;
  const q = s.queues.get(name);
  if (!q || (e.ifOwnerLostAt !== undefined && q.ownerLostAt !== e.ifOwnerLostAt))
    return { type: 'delete', deleted: false, dropped: 0 };
  const dropped = q.messageCount;
  for (const m of q.acquired.toArray()) {
    forgetAcquired(s, m, m.owner!);
    retire(s, m);
  }
  for (let m = q.available.head; m; ) {
    const next = m.next;
    retire(s, m);
    m.prev = m.next = undefined;
    m = next;
  }
  s.queues.delete(name);
  const topic = q.options.subscription?.topic;
  if (topic !== undefined) {
    const rest = s.subscriptions.get(topic)!.filter((sub) => sub !== q);
    if (rest.length > 0) s.subscriptions.set(topic, rest);
    else s.subscriptions.delete(topic);
  }
  return { type: 'delete', deleted: true, dropped };
}

export function purge(s: BrokerState, e: PurgeQueueEvent): PurgeResult {
  const q = s.queues.get(e.queue);
  if (!q) return { type: 'purge', found: false, purged: 0 };
  let purged = 0;
  for (let m = q.available.head; m; ) {
    const next = m.next;
    q.available.remove(m);
    q.uncount(m);
    retire(s, m);
    purged++;
    m = next;
  }
  return { type: 'purge', found: true, purged };
}

export function ownerAttached(s: BrokerState, e: OwnerAttachedEvent): OwnerResult {
  const q = s.queues.get(e.queue);
  if (!q || q.options.temporary === undefined) return { type: 'owner-attached', changed: false };
  q.holder = e.holder;
  q.ownerLostAt = undefined;
  return { type: 'owner-attached', changed: true };
}

export function ownerLost(s: BrokerState, e: OwnerLostEvent): OwnerResult {
  const q = s.queues.get(e.queue);
  if (!q || q.holder !== e.holder) return { type: 'owner-lost', changed: false };
  q.holder = undefined;
  q.ownerLostAt = s.now;
  return { type: 'owner-lost', changed: true };
}
