/**
 * The `acquire` event: a consumer takes available messages of a queue, in delivery order or
 * exactly the seqs its selector chose, skipping (and dropping) expired ones, ones reserved for
 * another link and ones marked undeliverable to its link.
 */

import type { BrokerState } from './broker-state.js';
import type { AcquireEvent } from './events.js';
import { heldBy, hold, retire, unreserve } from './message-life.js';
import type { Queue } from './queue.js';
import type { QueuedMessage } from './queued-message.js';
import type { AcquiredMessage, AcquireResult } from './results.js';

export function acquire(s: BrokerState, e: AcquireEvent): AcquireResult {
  const messages: AcquiredMessage[] = [];
  const q = s.queues.get(e.queue);
  if (!q) return { type: 'acquire', messages };
  const wanted = e.seqs === undefined ? undefined : new Set(e.seqs);
  const last = e.seqs === undefined ? 0 : e.seqs[e.seqs.length - 1]!;
  const max = wanted ? wanted.size : (e.max ?? 1);
  const link = e.link ?? e.consumer;
  // what the consumer holds: looked up once per acquire, not once per message
  let held: Map<number, QueuedMessage> | undefined;
  let m = q.available.head;
  while (m !== undefined && messages.length < max) {
    const next = m.next;
    if (wanted) {
      // the list is in seq order: nothing wanted lies beyond the last seq asked for
      if (m.seq > last) break;
      if (!wanted.has(m.seq)) {
        m = next;
        continue;
      }
    }
    if (m.isExpired(s.now)) {
      q.available.remove(m);
      q.uncount(m);
      retire(s, m);
    } else if (m.reservedAgainst(link, s.now)) {
      // held for the link that had it when it went away: skipped, like an undeliverable one
    } else if (m.undeliverable === undefined || !m.undeliverable.includes(link)) {
      q.available.remove(m);
      unreserve(q, m);
      held ??= heldBy(s, e.consumer);
      messages.push(takeFor(q, m, e.consumer, held));
    }
    m = next;
  }
  return { type: 'acquire', messages };
}

function takeFor(
  q: Queue,
  m: QueuedMessage,
  consumer: string,
  held: Map<number, QueuedMessage>,
): AcquiredMessage {
  const firstAcquirer = !m.acquiredBefore;
  m.acquiredBefore = true;
  q.acquiredCount++;
  hold(q, m, consumer, held);
  const out: AcquiredMessage = {
    seq: m.seq,
    queue: q.name,
    message: m.bytes,
    deliveryCount: m.deliveryCount,
    firstAcquirer,
  };
  if (m.deadLetter) out.deadLetter = m.deadLetter;
  return out;
}
