/**
 * The end of a failover run (bench/failover.ts): the queue's depth as each member reports it, and
 * the raw drain (no receiver dedup) that counts lost and duplicated messages.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterHandle } from '../../src/broker.js';
import { connect, type Delivery } from '../../src/index.js';

/**
 * What the raw drain saw. A copy that arrives on the same drain connection as an earlier one is
 * a second message in the queue (the broker hands an acquired message to one link once); a copy
 * that arrives after the drain's own connection failed over may be the redelivery of one whose
 * accept was not yet confirmed when that connection died (docs/failover.md#receivers), which is
 * the drain's artefact, not a copy in the queue.
 */
export interface DrainResult {
  /** message-id -> copies found in the queue */
  counts: Map<string, number>;
  /** deliveries after a failover of the drain's connection, of message-ids it had already seen */
  redelivered: number;
  /** failovers of the drain's own connection */
  drainFailovers: number;
}

/** The queue's depth as each serving member reports it (its replicated state). */
export async function queueDepths(cluster: ClusterHandle, queue: string): Promise<number[]> {
  const depths: number[] = [];
  for (const url of cluster.httpUrls) {
    try {
      const res = await fetch(`${url}/api/queues`, { signal: AbortSignal.timeout(3_000) });
      const doc = (await res.json()) as { queues?: { name: string; messages: number }[] };
      const q = doc.queues?.find((x) => x.name === queue);
      if (q) depths.push(q.messages);
    } catch {
      // not answering: no figure
    }
  }
  return depths;
}

/** Drains `queue` raw (no receiver dedup), telling copies in the queue from its own redeliveries. */
export async function drainRaw(urls: string[], queue: string, expect: Set<string>): Promise<DrainResult> {
  const conn = await connect({ urls, idleTimeoutMs: 2_000 });
  let drainFailovers = 0;
  conn.on('failover', () => drainFailovers++);
  const receiver = await conn.openReceiver(queue, { credit: 500, dedup: false });
  const counts = new Map<string, number>();
  /** the drain connection (failover count) each message-id was last seen on */
  const seenOn = new Map<string, number>();
  let redelivered = 0;
  let lastAt = Date.now();
  const done = (async () => {
    try {
      for await (const d of receiver as AsyncIterable<Delivery>) {
        const id = String(d.message.messageId);
        const epoch = drainFailovers;
        const before = seenOn.get(id);
        seenOn.set(id, epoch);
        if (before !== undefined && before < epoch) redelivered++;
        else counts.set(id, (counts.get(id) ?? 0) + 1);
        lastAt = Date.now();
        d.accept().catch(() => undefined);
      }
    } catch {
      // closed
    }
  })();
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const all = [...expect].every((id) => counts.has(id));
    if (all && Date.now() - lastAt > 2_000) break;
    await sleep(100);
  }
  await receiver.close().catch(() => undefined);
  await done;
  await conn.close();
  return { counts, redelivered, drainFailovers };
}
