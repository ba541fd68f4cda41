/**
 * The client against RabbitMQ 3.10 with its AMQP 1.0 plugin (one node shared by the integration
 * run): send/receive on classic queues, release/reject, PLAIN and ANONYMOUS, the fallback to
 * rcv-settle-mode first (RabbitMQ refuses second) noted in the receiver's state, and a failover
 * when RabbitMQ drops the connection.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LinkProxy } from '../../../src/cluster-broker/netproxy/index.js';
import { type Connection, connect, type Delivery } from '../../../src/index.js';

const rabbitUrl = inject('rabbitUrl');
const conns: Connection[] = [];

async function client(extra: Partial<Parameters<typeof connect>[0]> = {}): Promise<Connection> {
  const c = await connect({ urls: rabbitUrl, timeoutMs: 30_000, ...extra });
  conns.push(c);
  return c;
}

function withCredentials(url: string, user: string, pass: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = pass;
  return u.toString();
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
});

describe('client against RabbitMQ 3.10 (AMQP 1.0 plugin)', () => {
  it('sends and receives on a classic queue, in order, with message-ids kept', async () => {
    const conn = await client();
    const q = `/queue/client-basic-${randomUUID()}`;
    const receiver = await conn.openReceiver(q, { credit: 10 });
    const sender = await conn.openSender(q);
    const ids: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await sender.send({ body: `m${i}`, applicationProperties: { i } });
      expect(r.state).toBe('accepted');
      ids.push(r.messageId);
    }
    const got: Delivery[] = [];
    for await (const d of receiver) {
      got.push(d);
      await d.accept();
      if (got.length === 20) break;
    }
    expect(got.map((d) => d.message.body)).toEqual(ids.map((_, i) => `m${i}`));
    expect(got.map((d) => d.message.messageId)).toEqual(ids);
  });

  it('falls back to rcv-settle-mode first and says so in the receiver state', async () => {
    const conn = await client();
    const q = `/queue/client-mode-${randomUUID()}`;
    const receiver = await conn.openReceiver(q, { timeoutMs: 10_000 });
    expect(receiver.settleMode).toBe('first');
    expect(receiver.confirmedAccept).toBe(false);
    // and it still works
    const sender = await conn.openSender(q);
    await sender.send({ body: 'x' });
    const d = await receiver.receive({ timeoutMs: 10_000 });
    await d.accept();
  });

  it('release puts the message back; reject drops it', async () => {
    const conn = await client({ urls: withCredentials(rabbitUrl, 'guest', 'guest') });
    const q = `/queue/client-outcomes-${randomUUID()}`;
    const sender = await conn.openSender(q);
    await sender.send({ messageId: 'r1', body: 'again' });
    await sender.send({ messageId: 'r2', body: 'gone' });
    // one credit at a time, so a released message is not overtaken by one already prefetched
    const receiver = await conn.openReceiver(q, { credit: 0, dedup: false });
    receiver.addCredit(1);
    const d1 = await receiver.receive({ timeoutMs: 10_000 });
    expect(d1.message.messageId).toBe('r1');
    await d1.release();
    receiver.addCredit(1);
    const d2 = await receiver.receive({ timeoutMs: 10_000 });
    expect(d2.message.messageId).toBe('r1');
    await d2.accept();
    receiver.addCredit(1);
    const d3 = await receiver.receive({ timeoutMs: 10_000 });
    expect(d3.message.messageId).toBe('r2');
    await d3.reject({ condition: 'app:invalid', description: 'test' });
    receiver.addCredit(1);
    await expect(receiver.receive({ timeoutMs: 1_000 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('credit 0 with addCredit against RabbitMQ', async () => {
    const conn = await client();
    const q = `/queue/client-credit-${randomUUID()}`;
    const sender = await conn.openSender(q);
    for (let i = 0; i < 4; i++) await sender.send({ body: i });
    const receiver = await conn.openReceiver(q, { credit: 0 });
    await expect(receiver.receive({ timeoutMs: 500 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
    receiver.addCredit(3);
    const got: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await receiver.receive({ timeoutMs: 10_000 });
      got.push(d.message.body);
      await d.accept();
    }
    expect(got).toEqual([0, 1, 2]);
    await expect(receiver.receive({ timeoutMs: 500 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('a refused attach (RabbitMQ ends the session) fails only that link', async () => {
    const conn = await client();
    const q = `/queue/client-ok-${randomUUID()}`;
    const sender = await conn.openSender(q);
    await expect(
      conn.openReceiver('/exchange/no-such-exchange-x/rk', { timeoutMs: 10_000 }),
    ).rejects.toBeTruthy();
    expect((await sender.send({ body: 'still fine' })).state).toBe('accepted');
  });
});

describe('client failover against RabbitMQ', () => {
  const proxies: LinkProxy[] = [];
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
  });

  async function proxied(): Promise<{ proxy: LinkProxy; url: string }> {
    const target = new URL(rabbitUrl);
    const proxy = new LinkProxy({ target: { host: target.hostname, port: Number(target.port) } });
    proxies.push(proxy);
    const port = await proxy.listen();
    const u = new URL(rabbitUrl);
    u.port = String(port);
    return { proxy, url: u.toString().replace(/\/$/, '') };
  }

  it('a reset connection mid-stream: every send is accepted, the receiver sees each id once', async () => {
    const { proxy, url } = await proxied();
    const conn = await client({
      urls: [url, rabbitUrl],
      randomizeMembers: false,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 30_000 },
    });
    const failovers: unknown[] = [];
    let inDoubt = 0;
    conn.on('failover', (f) => failovers.push(f));
    conn.on('inDoubt', () => inDoubt++);
    const q = `/queue/client-failover-${randomUUID()}`;
    const sender = await conn.openSender(q);
    const receiver = await conn.openReceiver(q, { credit: 20 });
    const total = 200;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) sends.push(sender.send({ messageId: `id-${i}`, body: i }));
    await sends[49];
    // the next 100 are written to a connection that is reset under them: in doubt, re-sent
    for (let i = 100; i < total; i++) sends.push(sender.send({ messageId: `id-${i}`, body: i }));
    await Promise.resolve();
    proxy.cut('reset');
    const results = (await Promise.all(sends)) as { state: string }[];
    expect(results.every((r) => r.state === 'accepted')).toBe(true);
    expect(failovers).toHaveLength(1);
    expect(inDoubt).toBeGreaterThan(0);
    const seen = new Set<unknown>();
    while (seen.size < total) {
      const d = await receiver.receive({ timeoutMs: 15_000 });
      expect(seen.has(d.message.messageId)).toBe(false);
      seen.add(d.message.messageId);
      await d.accept().catch(() => undefined);
    }
    // RabbitMQ has no duplicate detection: re-sent in-doubt messages may sit in the queue twice,
    // and the receiver's dedup settles them without handing them out
    await expect(receiver.receive({ timeoutMs: 1_000 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('modify (RabbitMQ ends the session with invalid-field) recovers by failing over', async () => {
    const conn = await client({ reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 30_000 } });
    const q = `/queue/client-modify-${randomUUID()}`;
    const sender = await conn.openSender(q);
    await sender.send({ messageId: 'mod-1', body: 'm' });
    const receiver = await conn.openReceiver(q, { credit: 1 });
    const d = await receiver.receive({ timeoutMs: 10_000 });
    const failover = new Promise((resolve) => conn.once('failover', resolve));
    await d.modify({ deliveryFailed: true });
    await failover;
    const again = await receiver.receive({ timeoutMs: 10_000 });
    expect(again.message.messageId).toBe('mod-1');
    await again.accept();
    expect((await sender.send({ body: 'still works' })).state).toBe('accepted');
  });
});
