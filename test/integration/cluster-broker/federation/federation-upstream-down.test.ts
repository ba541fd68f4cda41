/**
 * "Upstream down for a minute, then back: the link resumes by itself" (docs/federation.md#operator):
 * a queue link and a topic link from one upstream, whose broker is stopped for a full minute
 * (longer than the client's 30 s of failing over, so each link gives up its connection and
 * starts over) and restarted on the same port and data directory. Both links resume without
 * help and move what is published after: the queue's messages, and the topic's through the same
 * durable upstream subscription.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import type { Connection } from '../../../../src/index.js';
import { patientClient, publishIds, sendIds } from '../../../support/federation.js';
import { freePort, waitFor } from '../../../support/net.js';

/** The contract's minute. */
const DOWN_MS = 60_000;

const started: BrokerHandle[] = [];
const clients: Connection[] = [];
let dir = '';

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const b of started) await b.stop().catch(() => undefined);
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function upstream(port: number): Promise<BrokerHandle> {
  const a = await startBroker({ port, host: '127.0.0.1', clusterId: 'A', dataDir: dir });
  started.push(a);
  return a;
}

const ids = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('federation with its upstream down for a minute', () => {
  it('the queue and topic links resume by themselves and move what is published after', {
    timeout: 240_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'quorate-federation-down-'));
    const port = await freePort();
    const a1 = await upstream(port);
    const b = await startBroker({
      port: 0,
      host: '127.0.0.1',
      clusterId: 'B',
      federation: {
        upstreams: [
          {
            name: 'a',
            urls: [`amqp://127.0.0.1:${port}`],
            queues: ['orders'],
            topics: ['prices'],
            reconnectDelayMs: 500,
          },
        ],
      },
    });
    started.push(b);
    const conn = await patientClient(b.url);
    clients.push(conn);
    const orders = await conn.openReceiver('orders', { credit: 10 });
    const prices = await conn.openReceiver('prices', { topic: true, credit: 10 });
    const link = (kind: string) => b.federation().find((l) => l.kind === kind)!;
    await waitFor(() => b.federation().every((l) => l.state === 'running'), {
      timeoutMs: 30_000,
      what: 'links running',
    });

    await a1.stop();
    started.splice(started.indexOf(a1), 1);
    const downAt = Date.now();
    await waitFor(() => b.federation().every((l) => l.state === 'connecting'), {
      timeoutMs: 30_000,
      what: 'links down',
    });
    // the downtime is what is under test, not a wait for something: a full minute, measured
    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - downAt))));
    expect(b.federation().map((l) => l.state)).toEqual(['connecting', 'connecting']);
    // the client gave up failing over at least once (30 s) and the link started over
    expect(link('queue').lastError).toMatch(/upstream connection/);

    const a2 = await upstream(port);
    await sendIds(a2.url, 'orders', ids(3, 'order'));
    await waitFor(() => link('topic').state === 'running', { timeoutMs: 60_000, what: 'topic link back' });
    await publishIds(a2.url, 'prices', ids(3, 'price'));
    const take = async (r: typeof orders): Promise<string[]> => {
      const got: string[] = [];
      for (let n = 0; n < 3; n++) {
        const d = await r.receive({ timeoutMs: 60_000 });
        got.push(String(d.message.messageId));
        await d.accept();
      }
      return got;
    };
    expect(await Promise.all([take(orders), take(prices)])).toEqual([ids(3, 'order'), ids(3, 'price')]);
    expect(Date.now() - downAt).toBeGreaterThanOrEqual(DOWN_MS);
    // a move counts once the upstream confirmed its accept, which may come after the local
    // consumer already has the copy
    await waitFor(() => b.federation().every((l) => l.moved === 3), {
      timeoutMs: 30_000,
      what: 'moves counted',
    });
    expect(b.federation().map((l) => [l.kind, l.state, l.moved])).toEqual([
      ['queue', 'running', 3],
      ['topic', 'running', 3],
    ]);
  });
});
