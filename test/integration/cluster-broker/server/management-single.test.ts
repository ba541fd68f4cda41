/**
 * Management over AMQP against a single node (docs/management.md): `conn.management()` declares,
 * gets, lists, purges and deletes; a restart keeps what it did; v2 addresses (`/queues/NAME`)
 * attach to the named queue and name it in a relayed message's `to`; a user without the `manage` grant is answered 403.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, startBroker } from '../../../../src/broker.js';
import { parseUsers } from '../../../../src/cluster-broker/server/users.js';
import {
  type CallOptions,
  type Connection,
  type ConnectOptions,
  connect,
  type Management,
  ManagementError,
} from '../../../../src/index.js';
import { unwrapValue } from '../../../../src/wire-extensions.js';
import {
  closeConnection,
  connect as rheaConnect,
  sendAll,
} from '../../../cluster-broker/server/rhea-client.js';

const brokers: BrokerHandle[] = [];
const conns: Connection[] = [];
const dirs: string[] = [];

async function broker(opts: Parameters<typeof startBroker>[0] = {}): Promise<BrokerHandle> {
  const b = await startBroker({ host: '127.0.0.1', port: 0, ...opts });
  brokers.push(b);
  return b;
}

async function client(b: BrokerHandle, opts: Partial<ConnectOptions> = {}): Promise<Connection> {
  const c = await connect({ urls: [`amqp://127.0.0.1:${b.port}`], reconnect: false, ...opts });
  conns.push(c);
  return c;
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const b of brokers.splice(0)) await b.stop().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function sendN(conn: Connection, address: string, n: number): Promise<void> {
  const s = await conn.openSender(address);
  for (let i = 0; i < n; i++)
    expect((await s.send({ body: i }, { timeoutMs: 10_000 })).state).toBe('accepted');
  await s.close();
}

/**
 * A request the client has no method for (our `/subscriptions` extension), sent as the client
 * sends its own: the body of a 2xx reply, unwrapped; ManagementError otherwise.
 */
async function request(m: Management, method: string, path: string): Promise<unknown> {
  const raw = m as unknown as {
    request(method: string, path: string, body: unknown, call?: CallOptions): Promise<unknown>;
  };
  return unwrapValue(await raw.request(method, path, undefined, { timeoutMs: 10_000 }));
}

describe('management over AMQP, single node', () => {
  it('a durable topic subscription ($sub/...) is listed, gotten, purged and deleted; a declare refuses names no attach reaches', async () => {
    const b = await broker({ autoCreateQueues: true });
    const conn = await client(b, { containerId: 'subscriber' });
    const m = await conn.management({ timeoutMs: 10_000 });
    for (const subscription of ['ticks', 'other']) {
      const r = await conn.openReceiver('prices', { topic: true, durable: true, subscription });
      await r.close(); // detach with closed=false: the durable subscription stays
    }
    const publisher = await conn.openSender('prices', { topic: true });
    const publish = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++)
        expect((await publisher.send({ body: i }, { timeoutMs: 10_000 })).state).toBe('accepted');
    };
    await publish(3);

    const names = (await m.listQueues()).map((q) => q.name).filter((n) => n.startsWith('$sub/'));
    expect(names).toHaveLength(2);
    const listed = (await request(m, 'GET', '/subscriptions')) as { name: string; topic: string }[];
    expect(listed.map((s) => s.name).sort()).toEqual([...names].sort());
    expect(listed.every((s) => s.topic === 'prices')).toBe(true);
    const [ticks, other] = ['ticks', 'other'].map((s) => names.find((n) => n.endsWith(`/${s}`))!);

    expect((await m.getQueue(ticks!)).messageCount).toBe(3);
    expect(await m.purgeQueue(ticks!)).toBe(3);
    expect((await m.getQueue(ticks!)).messageCount).toBe(0);
    await publish(2);
    expect(await request(m, 'DELETE', `/subscriptions/${encodeURIComponent(ticks!)}`)).toEqual({
      message_count: 2,
    });
    expect(await m.deleteQueue(other!)).toBe(5);
    expect(await request(m, 'GET', '/subscriptions')).toEqual([]);
    await expect(m.getQueue(ticks!)).rejects.toMatchObject({ status: 404 });

    // names an attach could never reach (or the broker's own) are not declared
    for (const name of ['/queues/x', '/management', '$sub/x', '$temp/x'])
      await expect(m.declareQueue(name), name).rejects.toMatchObject({ status: 400 });
    await expect(
      m.declareQueue('q', { arguments: { 'x-quorate-dead-letter-queue': '/queues/q.dlq' } }),
    ).rejects.toMatchObject({ status: 400 });
    expect((await m.listQueues()).map((q) => q.name)).not.toContain('/queues/x');
  });

  it('declares with arguments, gets, lists, purges, deletes; a restart keeps it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quorate-mgmt-'));
    dirs.push(dataDir);
    let b = await broker({ dataDir, autoCreateQueues: false });
    let conn = await client(b);
    const m = await conn.management({ timeoutMs: 10_000 });

    const q = await m.declareQueue('orders', { maxLength: 5, deliveryLimit: 3 });
    expect(q).toMatchObject({ name: 'orders', durable: true, messageCount: 0 });
    expect(q.arguments).toMatchObject({ 'x-max-length': 5, 'x-delivery-limit': 3 });
    // idempotent with the same arguments; a contradiction is a 409
    expect((await m.declareQueue('orders', { deliveryLimit: 3 })).name).toBe('orders');
    await expect(m.declareQueue('orders', { deliveryLimit: 4 })).rejects.toMatchObject({
      name: 'ManagementError',
      status: 409,
      condition: 'amqp:precondition-failed',
    });

    // the declared queue exists although auto-create is off; its max length holds
    await sendN(conn, 'orders', 5);
    const s = await conn.openSender('orders');
    await expect(s.send({ body: 'sixth' }, { timeoutMs: 10_000 })).rejects.toMatchObject({
      outcome: { state: 'rejected', error: { condition: 'amqp:resource-limit-exceeded' } },
    });
    await s.close();
    expect((await m.getQueue('orders')).messageCount).toBe(5);
    expect((await m.listQueues()).map((x) => x.name)).toContain('orders');

    expect(await m.purgeQueue('orders')).toBe(5);
    expect((await m.getQueue('orders')).messageCount).toBe(0);
    await sendN(conn, 'orders', 2);

    await m.declareQueue('gone');
    await sendN(conn, 'gone', 1);
    expect(await m.deleteQueue('gone')).toBe(1);
    await expect(m.getQueue('gone')).rejects.toBeInstanceOf(ManagementError);
    await expect(m.getQueue('gone')).rejects.toMatchObject({ status: 404 });

    await conn.close();
    await b.stop();
    brokers.length = 0;
    b = await broker({ dataDir, autoCreateQueues: false });
    conn = await client(b);
    const after = await conn.management({ timeoutMs: 10_000 });
    const again = await after.getQueue('orders');
    expect(again.messageCount).toBe(2);
    expect(again.arguments).toMatchObject({ 'x-max-length': 5, 'x-delivery-limit': 3 });
    await expect(after.getQueue('gone')).rejects.toMatchObject({ status: 404 });
  });

  it('a per-queue delivery limit overrides the broker-wide one', async () => {
    const b = await broker({ queueDefaults: { deliveryLimit: 10 } });
    const conn = await client(b);
    const m = await conn.management({ timeoutMs: 10_000 });
    await m.declareQueue('poison', { deliveryLimit: 2 });
    await sendN(conn, 'poison', 1);
    const r = await conn.openReceiver('poison', { credit: 1 });
    for (let i = 0; i < 2; i++) {
      const d = await r.receive({ timeoutMs: 10_000 });
      await d.modify({ deliveryFailed: true });
    }
    const dlq = await conn.openReceiver('poison.dlq', { credit: 1 });
    const dead = await dlq.receive({ timeoutMs: 10_000 });
    expect(dead.message.body).toBe(0);
    expect(dead.message.deliveryCount).toBe(2);
    await dead.accept();
    expect((await m.getQueue('poison')).messageCount).toBe(0);
  });

  it('v2 addresses: /queues/NAME (percent-encoded) sends to and receives from queue NAME', async () => {
    const b = await broker({ autoCreateQueues: false });
    const conn = await client(b);
    const m = await conn.management({ timeoutMs: 10_000 });
    await m.declareQueue('a b/c');
    await sendN(conn, `/queues/${encodeURIComponent('a b/c')}`, 3);
    expect((await m.getQueue('a b/c')).messageCount).toBe(3);
    const r = await conn.openReceiver(`/queues/${encodeURIComponent('a b/c')}`);
    const d = await r.receive({ timeoutMs: 10_000 });
    expect(d.message.body).toBe(0);
    await d.accept();
    // a v2 address that does not decode is refused, not taken for a queue name
    await expect(conn.openSender('/queues/%E0%A4%A', { timeoutMs: 10_000 })).rejects.toMatchObject({
      condition: 'amqp:invalid-field',
    });
  });

  it("the anonymous relay: a message's `to` of /queues/NAME goes to queue NAME", async () => {
    const b = await broker({ autoCreateQueues: false });
    const conn = await client(b);
    const m = await conn.management({ timeoutMs: 10_000 });
    await m.declareQueue('a b/c');
    const rhea = await rheaConnect({ port: b.port });
    try {
      const outcomes = await sendAll(
        rhea,
        '',
        [
          { to: `/queues/${encodeURIComponent('a b/c')}`, body: 'v2' },
          { to: 'a b/c', body: 'plain' },
          { to: '/queues/%E0%A4%A', body: 'undecodable' },
        ],
        { target: {} },
      );
      expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted', 'rejected']);
      expect(outcomes[2]!.error?.condition).toBe('amqp:invalid-field');
    } finally {
      await closeConnection(rhea);
    }
    expect((await m.getQueue('a b/c')).messageCount).toBe(2);
    // the encoded form named no queue of its own
    expect((await m.listQueues()).map((q) => q.name)).toEqual(['a b/c']);
  });

  it('without the manage grant every request is answered 403; with it, allowed', async () => {
    const users = parseUsers(`admin:${await hashPassword('a')}\napp:${await hashPassword('b')}\n`);
    const permissions = {
      users: { admin: { manage: true }, app: { send: ['#'], receive: ['#'] } },
    };
    const b = await broker({ users, permissions, anonymous: false });
    const app = await client(b, { username: 'app', password: 'b' });
    const denied = await app.management({ timeoutMs: 10_000 });
    await expect(denied.declareQueue('x')).rejects.toMatchObject({
      status: 403,
      condition: 'amqp:unauthorized-access',
    });
    await expect(denied.listQueues()).rejects.toMatchObject({ status: 403 });
    const admin = await client(b, { username: 'admin', password: 'a' });
    const allowed = await admin.management({ timeoutMs: 10_000 });
    expect((await allowed.declareQueue('x')).name).toBe('x');
    expect((await allowed.listQueues()).map((q) => q.name)).toEqual(['x']);
  });
});
