/**
 * No silent refusals: a send the broker did not accept rejects with a SendError carrying the
 * outcome, and settlement calls nobody awaits never crash the process after conn.close().
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { type Connection, connect, type Delivery, SendError } from '../../src/index.js';
import { type RheaPeer, startRheaPeer } from './rhea-peer.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function client(url: string): Promise<Connection> {
  const c = await connect({ urls: url, reconnect: false });
  cleanups.push(() => c.close());
  return c;
}

describe('no silent refusals', () => {
  it.each([
    ['reject', { state: 'rejected' }],
    ['release', { state: 'released' }],
    ['modify', { state: 'modified' }],
  ] as const)(
    'a %s outcome rejects send() with SendError carrying it, not in doubt',
    async (outcome, expected) => {
      const p: RheaPeer = await startRheaPeer({ outcome: () => outcome });
      cleanups.push(() => p.stop());
      const conn = await client(p.url);
      const sender = await conn.openSender('q');
      const err = (await sender
        .send({ messageId: 'refused-1', body: 1 })
        .catch((e: unknown) => e)) as SendError;
      expect(err).toBeInstanceOf(SendError);
      expect(err.condition).toBe('quorate:not-accepted');
      expect(err.outcome).toMatchObject(expected);
      expect(err.messageId).toBe('refused-1');
      expect(err.inDoubt).toBe(false);
      expect(conn.stats()).toMatchObject({ accepted: 0, notAccepted: 1, inFlight: 0 });
    },
  );

  it('un-awaited accept() calls never become unhandled rejections when the connection closes', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(async () => process.off('unhandledRejection', onUnhandled));
    const b = await startBroker({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => b.stop());
    const conn = await client(b.url);
    const sender = await conn.openSender('q');
    for (let i = 0; i < 5; i++) await sender.send({ body: i });
    const receiver = await conn.openReceiver('q');
    expect(receiver.confirmedAccept).toBe(true); // accept() waits for the broker: it is pending at close
    const seen: Delivery[] = [];
    for await (const d of receiver) {
      d.accept(); // not awaited, as in the report
      seen.push(d);
      if (seen.length === 5) break;
    }
    await conn.close();
    // let any rejection reach the unhandled-rejection check (it runs after the microtask queue drains)
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
    // a caller that does await still sees how it ended
    const again = seen[0]!;
    await expect(again.accept()).rejects.toMatchObject({ condition: 'quorate:illegal-state' });
  });
});
