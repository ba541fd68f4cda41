import type { Receiver } from '../../src/index.js';

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
