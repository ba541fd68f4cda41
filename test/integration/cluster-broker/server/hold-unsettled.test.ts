/**
 * `openReceiver(address, { holdUnsettled: true })` (capability `quorate:hold-unsettled`,
 * docs/delivery-contract.md#held-unsettled) against the reference broker: what a receiver held
 * unsettled when its connection died waits for the same link identity; a competing consumer
 * does not get it meanwhile (it gets what arrives after), the re-attached link does.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { type Connection, connect, type DialFunction } from '../../../../src/index.js';
import { withBroker } from '../../../support/broker.js';

const LOCAL = { host: '127.0.0.1' };

/** A connection whose socket the test can cut (no reconnect: it is gone for good). */
async function cuttable(port: number, containerId: string): Promise<{ conn: Connection; cut: () => void }> {
  let socket: net.Socket | undefined;
  const dial: DialFunction = () =>
    new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.once('connect', () => resolve(s));
      s.once('error', reject);
      socket = s;
    });
  const conn = await connect({ urls: 'amqp://broker.invalid', containerId, dial, reconnect: false });
  return { conn, cut: () => socket?.destroy() };
}

describe('held unsettled', () => {
  it('keeps what a lost receiver held for its re-attach, not for a competing consumer', async () => {
    await withBroker(LOCAL, async (b) => {
      const producer = await connect({ urls: `amqp://127.0.0.1:${b.port}`, containerId: 'producer' });
      const competitor = await connect({ urls: `amqp://127.0.0.1:${b.port}`, containerId: 'competitor' });
      try {
        const sender = await producer.openSender('held-q');
        for (const id of ['m1', 'm2']) await sender.send({ messageId: id, body: id });
        const first = await cuttable(b.port, 'holder');
        // credit granted by hand: the prefetch window would refill as m1 and m2 are handed out
        const holder = await first.conn.openReceiver('held-q', { name: 'r', credit: 0, holdUnsettled: true });
        holder.addCredit(2);
        const got = await holder.receive({ max: 2, timeoutMs: 10_000 });
        const more = got.length < 2 ? [await holder.receive({ timeoutMs: 10_000 })] : [];
        expect([...got, ...more].map((d) => d.message.messageId)).toEqual(['m1', 'm2']);

        const other = await competitor.openReceiver('held-q', { credit: 10 });
        first.cut(); // the holder's connection dies with m1 and m2 unsettled
        // the competitor is live: it gets what is sent after, never m1 or m2 while they are held
        await sender.send({ messageId: 'm3', body: 'm3' });
        const d3 = await other.receive({ timeoutMs: 10_000 });
        expect(d3.message.messageId).toBe('m3');
        await d3.accept();
        await expect(other.receive({ timeoutMs: 1_500 })).rejects.toMatchObject({
          condition: 'quorate:timeout',
        });

        // the same link identity (container-id + link name) gets them back, redelivered
        const again = await connect({ urls: `amqp://127.0.0.1:${b.port}`, containerId: 'holder' });
        try {
          const back = await again.openReceiver('held-q', { name: 'r', credit: 2, holdUnsettled: true });
          const redelivered = [
            await back.receive({ timeoutMs: 10_000 }),
            await back.receive({ timeoutMs: 10_000 }),
          ];
          expect(redelivered.map((d) => d.message.messageId)).toEqual(['m1', 'm2']);
          expect(redelivered.every((d) => d.message.firstAcquirer !== true)).toBe(true);
          for (const d of redelivered) await d.accept();
        } finally {
          await again.close();
        }
        expect(b.stats().queues.find((q) => q.name === 'held-q')?.depth ?? 0).toBe(0);
      } finally {
        await producer.close();
        await competitor.close();
      }
    });
  }, 60_000);
});
