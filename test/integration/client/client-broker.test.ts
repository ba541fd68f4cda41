/**
 * The client against the reference broker (startBroker from src/broker.ts): confirmed accept
 * (rcv-settle-mode second), outcomes per docs/delivery-contract.md#outcomes, a connection reset mid-stream
 * with in-doubt re-sends deduplicated by the broker (exactly once in the queue), and a receiver
 * surviving a broker restart on its data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../src/broker.js';
import { LinkProxy } from '../../../src/cluster-broker/netproxy/index.js';
import { type Connection, type ConnectOptions, connect, type SendResult } from '../../../src/index.js';

const brokers: BrokerHandle[] = [];
const conns: Connection[] = [];
const proxies: LinkProxy[] = [];
const dirs: string[] = [];

async function broker(opts: Parameters<typeof startBroker>[0] = {}): Promise<BrokerHandle> {
  const b = await startBroker({ host: '127.0.0.1', port: 0, ...opts });
  brokers.push(b);
  return b;
}

async function client(opts: ConnectOptions): Promise<Connection> {
  const c = await connect({
    randomizeMembers: false,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 30_000 },
    ...opts,
  });
  conns.push(c);
  return c;
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const p of proxies.splice(0)) await p.close().catch(() => undefined);
  for (const b of brokers.splice(0)) await b.stop().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('client against the reference broker', () => {
  it('confirmed accept: the broker answers rcv-settle-mode second and accept() waits for it', async () => {
    const b = await broker();
    const conn = await client({ urls: b.url });
    const sender = await conn.openSender('ref-q');
    const receiver = await conn.openReceiver('ref-q');
    expect(receiver.settleMode).toBe('second');
    expect(receiver.confirmedAccept).toBe(true);
    for (let i = 0; i < 10; i++) expect((await sender.send({ body: i })).state).toBe('accepted');
    for (let i = 0; i < 10; i++) {
      const d = await receiver.receive({ timeoutMs: 5000 });
      expect(d.message.body).toBe(i);
      await d.accept();
    }
    const q = b.stats().queues.find((x) => x.name === 'ref-q');
    expect(q?.depth ?? 0).toBe(0);
  });

  it('outcomes: release keeps the delivery-count, modify{deliveryFailed} adds one, reject dead-letters', async () => {
    const b = await broker();
    const conn = await client({ urls: b.url });
    const sender = await conn.openSender('ref-out');
    await sender.send({ messageId: 'o1', body: 'o' });
    const receiver = await conn.openReceiver('ref-out', { credit: 0, dedup: false });
    receiver.addCredit(1);
    const d1 = await receiver.receive({ timeoutMs: 5000 });
    expect(d1.deliveryCount).toBe(0);
    await d1.release();
    receiver.addCredit(1);
    const d2 = await receiver.receive({ timeoutMs: 5000 });
    expect(d2.deliveryCount).toBe(0);
    await d2.modify({ deliveryFailed: true });
    receiver.addCredit(1);
    const d3 = await receiver.receive({ timeoutMs: 5000 });
    expect(d3.deliveryCount).toBe(1);
    await d3.reject({ condition: 'app:bad', description: 'test' });
    const queues = b.stats().queues;
    const dlq = queues.find((x) => x.name !== 'ref-out' && x.name.startsWith('ref-out'));
    expect(dlq?.depth).toBe(1);
  });

  it('a connection reset mid-stream: in-doubt re-sends are deduplicated by the broker (exactly once)', async () => {
    const b = await broker();
    const proxy = new LinkProxy({ target: { host: '127.0.0.1', port: b.port } });
    proxies.push(proxy);
    const proxyPort = await proxy.listen();
    const conn = await client({ urls: [`amqp://127.0.0.1:${proxyPort}`, b.url] });
    let inDoubt = 0;
    conn.on('inDoubt', () => inDoubt++);
    const sender = await conn.openSender('ref-dedup');
    const sends: Promise<SendResult>[] = [];
    for (let i = 0; i < 100; i++) sends.push(sender.send({ body: i }));
    await sends[49];
    for (let i = 100; i < 300; i++) sends.push(sender.send({ body: i }));
    await Promise.resolve();
    proxy.cut('reset');
    const results = await Promise.all(sends);
    expect(results.every((r) => r.state === 'accepted')).toBe(true);
    expect(inDoubt).toBeGreaterThan(0);
    const q = b.stats().queues.find((x) => x.name === 'ref-dedup')!;
    expect(q.depth).toBe(300);
    const receiver = await conn.openReceiver('ref-dedup', { credit: 50 });
    const bodies: number[] = [];
    while (bodies.length < 300) {
      const d = await receiver.receive({ timeoutMs: 10_000 });
      bodies.push(d.message.body as number);
      await d.accept();
    }
    expect(bodies).toEqual([...Array(300).keys()]);
  });

  it('a receiver and a sender survive a broker restart on the same data directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorate-client-broker-'));
    dirs.push(dir);
    let b = await broker({ dataDir: dir });
    const port = b.port;
    const conn = await client({ urls: b.url });
    const sender = await conn.openSender('ref-restart');
    const receiver = await conn.openReceiver('ref-restart', { credit: 5 });
    for (let i = 0; i < 5; i++) await sender.send({ messageId: `r${i}`, body: i });
    const first = await receiver.receive({ timeoutMs: 5000 });
    await first.accept();
    const failover = new Promise((resolve) => conn.once('failover', resolve));
    await b.stop();
    brokers.length = 0;
    b = await broker({ dataDir: dir, port });
    await failover;
    await sender.send({ messageId: 'r5', body: 5 });
    const rest: unknown[] = [];
    while (rest.length < 5) {
      const d = await receiver.receive({ timeoutMs: 10_000 });
      rest.push(d.message.messageId);
      await d.accept();
    }
    expect(rest).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });
});
