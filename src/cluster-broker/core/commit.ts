/**
 * The `commit` event (local transactions): enqueues and settles applied as one, after checking
 * every enqueue fits (an unknown queue or a limit: nothing applied, `refused`).
 */

import type { BrokerState } from './broker-state.js';
import { enqueue } from './enqueue.js';
import type { CommitEvent, EnqueueEvent } from './events.js';
import type { Queue } from './queue.js';
import { type CommitResult, refused } from './results.js';
import { settle } from './settle.js';
import { matchingSubscriptions } from './topic-publish.js';

export function commit(s: BrokerState, e: CommitEvent): CommitResult {
  // all or nothing: check every enqueue fits before applying any
  const adding = new Map<Queue, { n: number; bytes: number }>();
  // a publish's subscriptions, chosen once (one selector evaluation per message)
  const fanOut = new Map<EnqueueEvent, Queue[]>();
  for (const sub of e.events) {
    if (sub.type !== 'enqueue') continue;
    const q = s.queues.get(sub.queue);
    if (!q) {
      return refused('commit', 'amqp:not-found', `no queue ${sub.queue}`);
    }
    if (sub.dedupKey !== undefined && q.dedup.has(sub.dedupKey, s.now)) continue;
    let into = [q];
    if (q.options.topic) {
      into = matchingSubscriptions(s, q, sub.message);
      fanOut.set(sub, into);
    }
    for (const target of into) {
      const a = adding.get(target) ?? { n: 0, bytes: 0 };
      a.n++;
      a.bytes += sub.message.length;
      adding.set(target, a);
    }
  }
  for (const [q, a] of adding) {
    const { maxMessages, maxBytes } = q.resolved;
    if (q.messageCount + a.n > maxMessages || q.byteCount + a.bytes > maxBytes) {
      return refused(
        'commit',
        'amqp:resource-limit-exceeded',
        `queue ${q.name} cannot take the transaction's ${a.n} messages`,
      );
    }
  }
  const results = e.events.map((sub) =>
    sub.type === 'enqueue'
      ? enqueue(s, { ...sub, leaderTime: e.leaderTime }, fanOut.get(sub))
      : settle(s, { ...sub, leaderTime: e.leaderTime }),
  );
  return { type: 'commit', status: 'committed', results };
}
