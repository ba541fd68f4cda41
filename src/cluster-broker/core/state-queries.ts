/**
 * Read-only views of a BrokerState (its query methods delegate here): queue sizes, what a
 * consumer holds, browsing, scans of available messages, owner records, reservations. None
 * changes the state.
 */

import type { BrokerState } from './broker-state.js';
import type { QueueOptions } from './events.js';

/** One queue's size, as `stats()` reports it. */
export interface QueueInfo {
  /** The queue's name (its address). */
  name: string;
  /** Its limits, dead-letter queue and dedup window. */
  options: QueueOptions;
  /** Messages in the queue, available and acquired. */
  depth: number;
  /** Messages that can be handed to a consumer. */
  available: number;
  /** Messages held by consumers, not yet settled. */
  acquired: number;
  /** Encoded bytes of every message in the queue. */
  bytes: number;
}

/**
 * Diagnostics of one queue, not part of its contents (two states with equal snapshots may differ
 * here): counts of what was applied since this state started or was last restored.
 */
export interface QueueApplyCounts {
  /** Messages added (enqueued, or dead-lettered into it). */
  added: number;
  /** Acquisitions (deliveries, redeliveries included). */
  acquisitions: number;
}

export function queueInfo(s: BrokerState, name: string): QueueInfo | undefined {
  const q = s.queues.get(name);
  if (!q) return undefined;
  return {
    name,
    options: q.options,
    depth: q.messageCount,
    available: q.available.size,
    acquired: q.acquired.size,
    bytes: q.byteCount,
  };
}

export function queueApplyCounts(s: BrokerState, name: string): QueueApplyCounts | undefined {
  const q = s.queues.get(name);
  return q ? { added: q.addedCount, acquisitions: q.acquiredCount } : undefined;
}

export function liveBytes(s: BrokerState): number {
  let n = 0;
  for (const q of s.queues.values()) n += q.byteCount;
  return n;
}

export function acquiredBy(s: BrokerState, consumer: string): number[] {
  const m = s.consumers.get(consumer);
  return m ? [...m.keys()].sort((a, b) => a - b) : [];
}

export function browse(
  s: BrokerState,
  queue: string,
  limit: number,
): Array<{ seq: number; message: Uint8Array; acquiredBy?: string }> {
  const q = s.queues.get(queue);
  if (!q) return [];
  const all = q.acquired.toArray();
  for (let m = q.available.head; m; m = m.next) all.push(m);
  all.sort((a, b) => a.seq - b.seq);
  return all
    .slice(0, limit)
    .map((m) =>
      m.owner === undefined
        ? { seq: m.seq, message: m.bytes }
        : { seq: m.seq, message: m.bytes, acquiredBy: m.owner },
    );
}

export function ownedQueues(s: BrokerState): Array<{ queue: string; holder?: string; ownerLostAt?: number }> {
  const out: Array<{ queue: string; holder?: string; ownerLostAt?: number }> = [];
  for (const q of s.queues.values()) {
    if (q.holder !== undefined) out.push({ queue: q.name, holder: q.holder });
    else if (q.ownerLostAt !== undefined) out.push({ queue: q.name, ownerLostAt: q.ownerLostAt });
  }
  return out;
}

export function scanAvailable(
  s: BrokerState,
  queue: string,
  visit: (seq: number, message: Uint8Array, entry: object) => boolean,
): void {
  for (let m = s.queues.get(queue)?.available.head; m; m = m.next) {
    if (m.isExpired(s.now)) continue;
    if (!visit(m.seq, m.bytes, m)) return;
  }
}

export function browseAvailable(
  s: BrokerState,
  queue: string,
  afterSeq: number,
  max: number,
): Array<{ seq: number; message: Uint8Array; deliveryCount: number }> {
  const out: Array<{ seq: number; message: Uint8Array; deliveryCount: number }> = [];
  for (let m = s.queues.get(queue)?.available.head; m && out.length < max; m = m.next) {
    if (m.seq <= afterSeq || m.isExpired(s.now)) continue;
    out.push({ seq: m.seq, message: m.bytes, deliveryCount: m.deliveryCount });
  }
  return out;
}

export function availableSeqs(s: BrokerState, queue: string): number[] {
  const out: number[] = [];
  for (let m = s.queues.get(queue)?.available.head; m; m = m.next) out.push(m.seq);
  return out;
}

export function reservationLapse(s: BrokerState, queue: string, link: string): number | undefined {
  const q = s.queues.get(queue);
  if (q === undefined) return undefined;
  let first: number | undefined;
  for (const m of q.reserved) {
    const r = m.reservation;
    if (r === undefined || r.link === link || r.until <= s.now) continue;
    if (first === undefined || r.until < first) first = r.until;
  }
  return first;
}
