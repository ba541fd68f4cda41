/**
 * The `enqueue` event: one message into a queue, judged against the queue's dedup window and
 * limits at apply (docs/delivery-contract.md#dedup-at-apply); an enqueue to a topic is a publish
 * (topic-publish.ts).
 */

import type { BrokerState } from './broker-state.js';
import type { EnqueueEvent } from './events.js';
import { keep, newMessage } from './message-life.js';
import type { Queue } from './queue.js';
import { type EnqueueResult, refused } from './results.js';
import { matchingSubscriptions, publish } from './topic-publish.js';

/** `targets`: a publish's subscriptions when a commit already chose them. */
export function enqueue(s: BrokerState, e: EnqueueEvent, targets?: Queue[]): EnqueueResult {
  const q = s.queues.get(e.queue);
  if (!q) {
    return refused('enqueue', 'amqp:not-found', `no queue ${e.queue}`);
  }
  // admitted now, withdrawn below if refused: one hash operation where has then add took two
  if (e.dedupKey !== undefined && !q.dedup.admit(e.dedupKey, s.now))
    return { type: 'enqueue', status: 'duplicate' };
  if (q.options.topic) return publish(s, q, e, targets ?? matchingSubscriptions(s, q, e.message));
  const full = q.limitExceeded(e.message.length);
  if (full !== undefined) {
    if (e.dedupKey !== undefined) q.dedup.withdraw(e.dedupKey);
    return refused('enqueue', 'amqp:resource-limit-exceeded', full);
  }
  const m = newMessage(s, q, keep(s, e.message, q.arena), e.expiresAt ?? -1, e.deliveryCount ?? 0);
  q.add(m);
  return { type: 'enqueue', status: 'enqueued', seq: m.seq };
}
