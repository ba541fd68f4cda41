/**
 * The monitoring endpoints of a single-node broker (in process, durable store, users file): the
 * JSON documents' exact keys and values after real client traffic, /metrics through a strict
 * Prometheus parser, basic auth over the broker's users (probes stay open), the status page's
 * files and size.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, startBroker } from '../../../src/broker.js';
import { runStatusCommand } from '../../../src/cluster-broker/cli/status-command.js';
import { type Connection, connect } from '../../../src/index.js';
import { waitFor } from '../../support/net.js';
import { parsePrometheusText, sampleValue } from './prom-text.js';

let dir: string;
let broker: BrokerHandle;
let conn: Connection;
const AUTH = `Basic ${Buffer.from('alice:s3cret:with-colon').toString('base64')}`;

async function get(path: string, auth: string | null = AUTH): Promise<Response> {
  return fetch(`${broker.httpUrl}${path}`, auth ? { headers: { authorization: auth } } : {});
}

async function getJson<T>(path: string): Promise<T> {
  const res = await get(path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as T;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-http-single-'));
  const users = join(dir, 'users');
  await writeFile(
    users,
    `alice:${await hashPassword('s3cret:with-colon')}\nbob:${await hashPassword('other')}\n`,
  );
  broker = await startBroker({
    dataDir: join(dir, 'store'),
    usersFile: users,
    anonymous: false,
    httpPort: 0,
    containerId: 'single-under-test',
  });
  conn = await connect({
    urls: [broker.url],
    username: 'alice',
    password: 's3cret:with-colon',
    containerId: 'http-test-client',
  });
  const sender = await conn.openSender('orders');
  for (let i = 1; i <= 5; i++) {
    expect((await sender.send({ messageId: `m${i}`, body: i })).state).toBe('accepted');
  }
  // the same message-id again: the broker's duplicate detection answers accepted, enqueues nothing
  expect((await sender.send({ messageId: 'm1', body: 1 })).state).toBe('accepted');
  const receiver = await conn.openReceiver('orders', { credit: 10 });
  let n = 0;
  for await (const d of receiver) {
    n++;
    if (n === 3) await d.reject({ condition: 'test:bad', description: 'no' });
    else await d.accept();
    if (n === 5) break;
  }
  // one more: the receiver (still attached, credit left) gets it and leaves it unacknowledged
  await sender.send({ messageId: 'm6', body: 6 });
});

afterAll(async () => {
  await conn?.close();
  await broker?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('single-node monitoring endpoints', () => {
  it('GET /api/overview has exactly the documented keys', async () => {
    const o = await getJson<Record<string, unknown>>('/api/overview');
    expect(Object.keys(o).sort()).toEqual(
      [
        'member',
        'clusterId',
        'role',
        'term',
        'leader',
        'quorate',
        'serving',
        'commitIndex',
        'appliedIndex',
        'members',
        'queues',
        'connections',
        'consumers',
        'clusterConnections',
        'clusterConsumers',
        'uncountedMembers',
        'uptimeSeconds',
      ].sort(),
    );
    expect(o).toMatchObject({
      member: 'single-under-test',
      role: 'single',
      leader: 'single-under-test',
      quorate: true,
      serving: true,
      connections: 1,
      consumers: 1,
      // a single node is the whole cluster
      clusterConnections: 1,
      clusterConsumers: 1,
      uncountedMembers: [],
    });
    expect(o.queues).toBeGreaterThanOrEqual(1);
    expect(o.commitIndex).toBeGreaterThan(0);
    const members = o.members as Array<Record<string, unknown>>;
    expect(members).toHaveLength(1);
    expect(Object.keys(members[0]!).sort()).toEqual(
      ['connections', 'consumers', 'httpUrl', 'id', 'lag', 'reachable', 'url'].sort(),
    );
    expect(members[0]).toMatchObject({
      id: 'single-under-test',
      url: broker.url,
      reachable: true,
      lag: 0,
      connections: 1,
      consumers: 1,
    });
  });

  it('GET /api/queues: depth, bytes, consumers, unacknowledged and recent rates', async () => {
    type Doc = { queues: Array<Record<string, unknown>>; topics: unknown[] };
    const doc = await getJson<Doc>('/api/queues');
    expect(doc.topics).toEqual([]); // no link ever attached as a topic here
    const q = doc.queues.find((x) => x.name === 'orders')!;
    expect(Object.keys(q).sort()).toEqual(
      ['bytes', 'consumers', 'deliverRate', 'messages', 'name', 'publishRate', 'unacknowledged'].sort(),
    );
    expect(q).toMatchObject({ messages: 1, unacknowledged: 1, consumers: 1 });
    expect(q.bytes).toBeGreaterThan(0);
    // the rejected message went to the default dead-letter queue
    expect(doc.queues.find((x) => x.name === 'orders.dlq')).toMatchObject({ messages: 1, consumers: 0 });

    // rates come from the once-a-second sampler: keep traffic flowing until it has seen some
    const other = await connect({ urls: [broker.url], username: 'bob', password: 'other' });
    const sender = await other.openSender('rates');
    const receiver = await other.openReceiver('rates', { credit: 50 });
    let flowing = true;
    const consumer = (async () => {
      for await (const d of receiver) {
        await d.accept();
        if (d.message.body === 'last') break;
      }
    })();
    const producer = (async () => {
      for (let i = 0; flowing; i++) {
        await sender.send({ body: i });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await waitFor(
        async () => {
          const r = (await getJson<Doc>('/api/queues')).queues.find((x) => x.name === 'rates');
          return r !== undefined && (r.publishRate as number) > 0 && (r.deliverRate as number) > 0;
        },
        { timeoutMs: 20_000, what: 'publish and deliver rates for queue rates' },
      );
    } finally {
      flowing = false;
      await producer;
      await sender.send({ body: 'last' }); // the consumer stops after accepting everything up to it
      await consumer;
      await other.close();
    }
    const history = await getJson<{ intervalSeconds: number; queues: Array<Record<string, number[]>> }>(
      '/api/history',
    );
    expect(history.intervalSeconds).toBe(1);
    const h = history.queues.find((x) => (x as unknown as { name: string }).name === 'rates')!;
    expect(Math.max(...h.publishRate!)).toBeGreaterThan(0);
    expect(h.messages!.length).toBe(h.at!.length);
  });

  it('GET /api/connections names the client, its user, sessions and links', async () => {
    const doc = await getJson<{ connections: Array<Record<string, unknown>> }>('/api/connections');
    expect(doc.connections).toHaveLength(1);
    const c = doc.connections[0]!;
    expect(Object.keys(c).sort()).toEqual(['containerId', 'links', 'openedAt', 'remote', 'sessions', 'user']);
    expect(c).toMatchObject({ containerId: 'http-test-client', user: 'alice' });
    expect(c.remote).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(c.sessions).toBeGreaterThanOrEqual(1);
    expect(c.links).toBe(2);
    expect(Date.now() - Date.parse(c.openedAt as string)).toBeLessThan(120_000);
  });

  it('GET /metrics parses as Prometheus text and counts what the clients did', async () => {
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const m = parsePrometheusText(await res.text());
    expect(m.get('quorate_messages_published_total')?.type).toBe('counter');
    // queue 'orders' saw exactly the traffic of beforeAll (other tests use other queues)
    expect(sampleValue(m, 'quorate_queue_published_total', { queue: 'orders' })).toBe(6);
    expect(sampleValue(m, 'quorate_queue_delivered_total', { queue: 'orders' })).toBe(6);
    expect(sampleValue(m, 'quorate_queue_messages', { queue: 'orders' })).toBe(1);
    expect(sampleValue(m, 'quorate_queue_unacknowledged', { queue: 'orders' })).toBe(1);
    expect(sampleValue(m, 'quorate_messages_deduplicated_total')).toBe(1);
    expect(sampleValue(m, 'quorate_messages_rejected_total')).toBe(1);
    expect(sampleValue(m, 'quorate_messages_redelivered_total')).toBe(0);
    // totals are the sums over the queues
    const perQueue = (name: string): number =>
      m.get(name)!.samples.reduce((sum, sample) => sum + sample.value, 0);
    expect(sampleValue(m, 'quorate_messages_published_total')).toBe(
      perQueue('quorate_queue_published_total'),
    );
    expect(sampleValue(m, 'quorate_messages_delivered_total')).toBe(
      perQueue('quorate_queue_delivered_total'),
    );
    // every delivery but the one still held was settled: 1 rejected, the rest accepted
    expect(sampleValue(m, 'quorate_messages_acknowledged_total')).toBe(
      sampleValue(m, 'quorate_messages_delivered_total')! - 2,
    );
    expect(sampleValue(m, 'quorate_connections')).toBe(1);
    expect(sampleValue(m, 'quorate_raft_leader_changes_total')).toBe(0);
    const fsyncs = sampleValue(m, 'quorate_fsync_duration_seconds_count');
    expect(fsyncs).toBeGreaterThan(0);
    expect(sampleValue(m, 'quorate_fsync_duration_seconds_bucket', { le: '+Inf' })).toBe(fsyncs);
    expect(m.has('process_resident_memory_bytes')).toBe(true);
  });

  it('GET /api/queues lists each topic with its subscriptions', async () => {
    const sub = await conn.openReceiver('prices', { topic: true, durable: true, subscription: 'watch' });
    try {
      const doc = await getJson<{ topics: Array<{ name: string; subscriptions: string[] }> }>('/api/queues');
      expect(doc.topics).toEqual([{ name: 'prices', subscriptions: ['$sub/http-test-client/watch'] }]);
    } finally {
      await sub.unsubscribe();
    }
  });

  it('asks for credentials of the broker users, except on /healthz and /readyz', async () => {
    for (const path of ['/api/overview', '/api/queues', '/api/connections', '/metrics', '/']) {
      const none = await get(path, null);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
      const wrong = await get(path, `Basic ${Buffer.from('alice:nope').toString('base64')}`);
      expect(wrong.status).toBe(401);
      expect((await get(path)).status).toBe(200);
    }
    const bob = await get('/api/overview', `Basic ${Buffer.from('bob:other').toString('base64')}`);
    expect(bob.status).toBe(200);
    expect((await get('/healthz', null)).status).toBe(200);
    const ready = await get('/readyz', null);
    expect(ready.status).toBe(200);
    expect((await get('/nothing-here')).status).toBe(404);
  });

  it('serves the status page: HTML, its script and style, all together under 200 KiB', async () => {
    const html = await get('/');
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    const text = await html.text();
    expect(text).toContain('<script src="status.js">');
    // nothing from elsewhere: no absolute URLs to load
    expect(text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const js = await (await get('/status.js')).text();
    const css = await (await get('/status.css')).text();
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(Buffer.byteLength(text) + Buffer.byteLength(js) + Buffer.byteLength(css)).toBeLessThan(200 * 1024);
  });

  it("`quorate-broker status` prints the overview as a table, with the users' credentials", async () => {
    const run = async (...argv: string[]): Promise<[number, string]> => {
      let out = '';
      const io = {
        stdout: { write: (c: string) => (out += c) },
        stderr: { write: (c: string) => (out += c) },
      };
      return [await runStatusCommand(argv, io), out];
    };
    const [code, table] = await run(broker.httpUrl!, '--user', 'alice', '--password', 's3cret:with-colon');
    expect(code).toBe(0);
    const [header, row] = table.split('\n');
    expect(header).toMatch(
      /^MEMBER\s+ROLE\s+LEADER\s+TERM\s+COMMIT\s+APPLIED\s+QUORATE\s+SERVING\s+QUEUES\s+CONNS\s+CONSUMERS\s+UP\s+URL$/,
    );
    expect(row).toMatch(
      /^single-under-test\s+single\s+single-under-test\s+0\s+\d+\s+\d+\s+yes\s+yes\s+\d+\s+1\s+\d+\s/,
    );
    const [denied, deniedTable] = await run(broker.httpUrl!);
    expect(denied).toBe(1);
    expect(deniedTable).toContain('unreachable (HTTP 401)');
    const [bad, usage] = await run('ftp://x');
    expect(bad).toBe(2);
    expect(usage).toBe(
      "quorate-broker status: 'ftp://x' is not an http:// URL\nsee 'quorate-broker status --help'\n",
    );
  });
});

describe('the "monitor" grant of a permissions file', () => {
  it('lets only users holding it read the HTTP API; probes stay open', async () => {
    const permsDir = await mkdtemp(join(tmpdir(), 'quorate-http-perms-'));
    const users = join(permsDir, 'users');
    const permissions = join(permsDir, 'permissions.json');
    await writeFile(users, `carol:${await hashPassword('watch')}\ndave:${await hashPassword('send')}\n`);
    await writeFile(
      permissions,
      JSON.stringify({
        users: { carol: { monitor: true }, dave: { send: ['orders'], receive: ['orders'] } },
      }),
    );
    const guarded = await startBroker({
      usersFile: users,
      permissionsFile: permissions,
      anonymous: false,
      httpPort: 0,
    });
    try {
      const as = (user: string, password: string) => ({
        headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
      });
      for (const path of ['/api/overview', '/api/queues', '/api/connections', '/metrics', '/']) {
        expect((await fetch(`${guarded.httpUrl}${path}`, as('carol', 'watch'))).status).toBe(200);
        // dave's password is right, but he has no "monitor" grant
        expect((await fetch(`${guarded.httpUrl}${path}`, as('dave', 'send'))).status).toBe(401);
      }
      expect((await fetch(`${guarded.httpUrl}/healthz`)).status).toBe(200);
      expect((await fetch(`${guarded.httpUrl}/readyz`)).status).toBe(200);
    } finally {
      await guarded.stop();
      await rm(permsDir, { recursive: true, force: true });
    }
  });
});
