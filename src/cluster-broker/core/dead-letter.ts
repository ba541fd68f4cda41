/**
 * Where a message goes when a delivery of it fails or it is refused for good
 * (docs/broker-features.md#delivery-limit, docs/delivery-contract.md#outcomes): back to its
 * queue at its FIFO position, or into the queue's dead-letter queue once its delivery-count
 * reaches the delivery limit, or dropped when its deadline passed.
 */

import type { BrokerState } from './broker-state.js';
import { newMessage, retire } from './message-life.js';
import { Queue } from './queue.js';
import type { QueuedMessage } from './queued-message.js';

/** The dead-letter error of a message that reached its queue's delivery limit. */
export const DELIVERY_LIMIT_CONDITION = 'quorate:delivery-limit';

/** A message moved to a dead-letter queue: its seq, the DLQ and its seq there. */
export type DeadLettered = { seq: number; queue: string; newSeq: number };

/**
 * A delivery of `m` failed (its link or connection was lost before settling it, or it came back
 * modified with delivery-failed): delivery-count + 1, then back to the queue, or to the
 * dead-letter queue once the count reaches the queue's delivery limit
 * (docs/broker-features.md#delivery-limit). True when it is available again.
 */
export function deliveryFailed(
  s: BrokerState,
  q: Queue,
  m: QueuedMessage,
  deadLettered: DeadLettered[],
): boolean {
  m.deliveryCount++;
  const limit = q.resolved.deliveryLimit;
  if (m.deliveryCount < limit || m.isExpired(s.now)) return makeAvailable(s, q, m);
  q.uncount(m);
  const moved = deadLetter(s, q, m, {
    condition: DELIVERY_LIMIT_CONDITION,
    description: `delivered ${m.deliveryCount} times (delivery limit ${limit})`,
  });
  if (moved) deadLettered.push(moved);
  retire(s, m);
  return false;
}

/** Back to available at its FIFO position, unless its deadline passed meanwhile (then dropped). */
export function makeAvailable(s: BrokerState, q: Queue, m: QueuedMessage): boolean {
  if (m.isExpired(s.now)) {
    q.uncount(m);
    retire(s, m);
    return false;
  }
  q.available.insertBySeq(m);
  return true;
}

/**
 * Moves a rejected message's bytes into the queue's dead-letter queue as a new message (new
 * seq, no expiry, delivery-count kept), auto-declaring the DLQ (with no DLQ of its own). Dropped
 * when the queue has no DLQ or the DLQ is full.
 */
export function deadLetter(
  s: BrokerState,
  from: Queue,
  m: QueuedMessage,
  error: { condition: string; description?: string } | undefined,
): DeadLettered | undefined {
  const dlqName = from.resolved.deadLetterQueue;
  if (dlqName === null) return undefined;
  let dlq = s.queues.get(dlqName);
  if (!dlq) {
    dlq = new Queue(dlqName, { deadLetterQueue: null });
    s.queues.set(dlqName, dlq);
  }
  if (dlq.limitExceeded(m.size) !== undefined) return undefined;
  // a copy in the DLQ's own chunks: a long-lived DLQ must not pin its source queue's chunks
  const moved = newMessage(s, dlq, dlq.arena.store(m.bytes), -1, m.deliveryCount);
  moved.acquiredBefore = m.acquiredBefore;
  moved.deadLetter = error ? { fromQueue: from.name, error: { ...error } } : { fromQueue: from.name };
  dlq.add(moved);
  return { seq: m.seq, queue: dlqName, newSeq: moved.seq };
}
