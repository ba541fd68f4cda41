import type { Connection, Receiver } from '../../src/index.js';

/** A receiver that only takes what it is asked for (credit 0), with its own dedup off. */
export function watcher(c: Connection, queue: string): Promise<Receiver> {
  return c.openReceiver(queue, { credit: 0, dedup: false });
}

/**
 * Everything a receiver opened with `credit: 0` can get now, accepted: the broker answers a drain
 * with what the queue holds, so an empty result means an empty queue, without waiting for a
 * message that should not come.
 */
export async function takeAvailable(r: Receiver, timeoutMs = 20_000): Promise<unknown[]> {
  r.addCredit(100);
  await r.drain({ timeoutMs });
  const bodies: unknown[] = [];
  while (r.buffered > 0) {
    const d = await r.receive({ timeoutMs: 1_000 });
    bodies.push(d.message.body);
    await d.accept();
  }
  return bodies;
}
