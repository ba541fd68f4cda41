/**
 * A receiver tracks each settlement that waits for the broker's confirmation (so a connection
 * loss can fail it), from the settlement until the confirmation, and nothing else, on every
 * path: confirmed by the broker (rcv-settle-mode second), written at once with nothing to wait
 * for (first), refused because the delivery was settled twice, and settled after its link is
 * gone. Against the reference broker.
 */
import { describe, expect, it } from 'vitest';
import type { Receiver as ReceiverLink } from '../../src/client/receiver.js';
import type { Receiver } from '../../src/index.js';
import { brokerAndConnection } from '../support/broker.js';

const env = brokerAndConnection();

async function fill(queue: string, n: number): Promise<void> {
  const sender = await env.conn.openSender(queue);
  await Promise.all(
    sender.sendBatch(Array.from({ length: n }, (_, i) => ({ messageId: `${queue}-${i}`, body: i }))),
  );
  await sender.close();
}

/** Settlements the receiver tracks while their confirmation is awaited (its internal count). */
const awaiting = (r: Receiver): number => (r as unknown as ReceiverLink).awaitingConfirmationCount;

async function take(receiver: Receiver, n: number) {
  const out = [];
  while (out.length < n) out.push(...(await receiver.receive({ max: n - out.length, timeoutMs: 20_000 })));
  return out;
}

describe('settlement bookkeeping', () => {
  it('forgets deliveries once the broker confirmed their outcome (mode second)', async () => {
    await fill('book-second', 50);
    const receiver = await env.conn.openReceiver('book-second', { credit: 50 });
    expect(receiver.confirmedAccept).toBe(true);
    const ds = await take(receiver, 50);
    expect(awaiting(receiver)).toBe(0); // handed out, nothing settled yet
    const half = ds.slice(0, 25).map((d) => d.accept());
    expect(awaiting(receiver)).toBe(25); // until the broker confirms
    await Promise.all(half);
    expect(awaiting(receiver)).toBe(0);
    const rest = ds.slice(25).map((d, i) => (i % 2 === 0 ? d.release() : d.accept({ timeoutMs: 10_000 })));
    expect(awaiting(receiver)).toBe(25);
    await Promise.all(rest);
    expect(awaiting(receiver)).toBe(0);
    await receiver.close();
  });

  it('tracks nothing in mode first: nothing to wait for', async () => {
    await fill('book-first', 20);
    const receiver = await env.conn.openReceiver('book-first', { credit: 20, confirmAccept: false });
    const ds = await take(receiver, 20);
    expect(awaiting(receiver)).toBe(0);
    for (const d of ds) void d.accept();
    expect(awaiting(receiver)).toBe(0);
    await receiver.close();
  });

  it('forgets a delivery whose link is gone when it is settled, and a second settlement changes nothing', async () => {
    await fill('book-gone', 2);
    const receiver = await env.conn.openReceiver('book-gone', { credit: 2 });
    const [a, b] = await take(receiver, 2);
    await a!.accept();
    await expect(a!.accept()).rejects.toThrow(/already settled/);
    await receiver.close();
    // its link is gone: a release is what the broker did anyway, it is done at once
    await b!.release();
    expect(awaiting(receiver)).toBe(0);
  });
});
