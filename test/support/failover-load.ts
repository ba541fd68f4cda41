/**
 * The load the failover tests put through a member they kill or stop: a producer that keeps a
 * window of sends in flight, receivers that count how often each message-id reaches the
 * application, and the RabbitMQ quorum queue those tests fail over on.
 */
import amqplib from 'amqplib';
import type { Delivery, Receiver } from '../../src/index.js';
import type { RabbitCluster } from './rabbitmq.js';

/** message-id -> times handed to the application, and the end of the loop filling it. */
export interface DeliveryCounts {
  counts: Map<string, number>;
  done: Promise<void>;
}

function count(counts: Map<string, number>, d: Delivery, accept: boolean): void {
  const id = String(d.message.messageId);
  counts.set(id, (counts.get(id) ?? 0) + 1);
  if (accept) d.accept().catch(() => undefined);
}

/** Counts what `receiver` hands out through its async iterator until it closes. */
export function countDeliveries(receiver: Receiver, accept = true): DeliveryCounts {
  const counts = new Map<string, number>();
  const done = (async () => {
    try {
      for await (const d of receiver as AsyncIterable<Delivery>) count(counts, d, accept);
    } catch {
      // receiver closed
    }
  })();
  return { counts, done };
}

/** Like countDeliveries(), through batch receives (`receive({ max })`) instead of the iterator. */
export function countBatches(receiver: Receiver): DeliveryCounts {
  const counts = new Map<string, number>();
  const done = (async () => {
    try {
      for (;;) for (const d of await receiver.receive({ max: 20 })) count(counts, d, true);
    } catch {
      // receiver closed
    }
  })();
  return { counts, done };
}

/**
 * Round `i` of `rounds` starts the sends `send(i)` returns, then waits while `window` or more are
 * in flight; resolves with every send's settled result, in order.
 */
export async function sendWindowed<T>(
  rounds: number,
  window: number,
  send: (i: number) => Promise<T>[],
): Promise<PromiseSettledResult<T>[]> {
  const results: Promise<T>[] = [];
  const inflight = new Set<Promise<unknown>>();
  for (let i = 0; i < rounds; i++) {
    for (const p of send(i)) {
      results.push(p);
      inflight.add(p);
      void p.finally(() => inflight.delete(p)).catch(() => undefined);
    }
    while (inflight.size >= window) await Promise.race(inflight).catch(() => undefined);
  }
  return Promise.allSettled(results);
}

/** Declares `queue` on `rabbit` as a quorum queue on all three nodes (over AMQP 0-9-1). */
export async function declareQuorumQueue(rabbit: RabbitCluster, queue: string): Promise<void> {
  const c = await amqplib.connect(rabbit.urls[0]!);
  const ch = await c.createChannel();
  await ch.assertQueue(queue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-quorum-initial-group-size': 3 },
  });
  await c.close();
}

/** The node leading quorum queue `queue`, as rabbitmqctl reports it. */
export async function quorumQueueLeader(rabbit: RabbitCluster, queue: string): Promise<string> {
  const out = await rabbit.nodes[0]!.ctl('list_queues', 'name', 'leader', '--quiet', '--no-table-headers');
  const line = out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((cols) => cols[0] === queue);
  const leader = line?.[1]?.split('@')[0];
  if (!leader) throw new Error(`no leader for ${queue} in: ${out}`);
  return leader;
}
