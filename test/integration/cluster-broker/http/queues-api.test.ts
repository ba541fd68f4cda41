/**
 * The queue changes of the HTTP API on a follower of a 3-member cluster (docs/management.md#http,
 * docs/security.md#http-changes): each refusal (no credentials, a user without the grant, the
 * custom header missing, a PUT that is not JSON, a CORS preflight) changes nothing; each success
 * (declare, purge, delete) is committed through the log and seen on another member.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterHandle, hashPassword } from '../../../../src/broker.js';
import { connect } from '../../../../src/index.js';
import {
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { waitFor } from '../../../support/net.js';

let dir: string;
let handle: ClusterHandle;
let follower: string;
let other: string;
let followerAmqp: string;

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const OPS = basic('ops', 'ops-pw');
const CHANGE = { 'x-quorate-request': '1' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quorate-queues-api-'));
  const usersFile = join(dir, 'users.txt');
  writeFileSync(usersFile, `ops:${await hashPassword('ops-pw')}\napp:${await hashPassword('app-pw')}\n`, {
    mode: 0o600,
  });
  handle = await startTestCluster({
    usersFile,
    permissions: {
      users: {
        ops: { manage: true, monitor: true },
        app: { send: ['web/orders', 'prices'], receive: ['prices'], monitor: true },
      },
    },
  });
  await waitServing(handle);
  const leader = await waitLeader(handle);
  const [f, o] = handle.ids.filter((id) => id !== leader);
  const http = (id: string): string => handle.members().find((m) => m.id === id)!.httpUrl!;
  follower = http(f!);
  other = http(o!);
  followerAmqp = handle.urls[handle.ids.indexOf(f!)]!;
}, 180_000);

afterAll(async () => {
  await handle?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: res.headers,
  };
}

async function queueOn(base: string, name: string): Promise<Record<string, unknown> | undefined> {
  const r = await call(base, 'GET', `/api/queues/${encodeURIComponent(name)}`, { authorization: OPS });
  return r.status === 200 ? r.body : undefined;
}

describe('HTTP queue changes on a cluster follower', () => {
  it('refuses every change that lacks credentials, the grant, the header or JSON, and changes nothing', async () => {
    const json = { ...CHANGE, 'content-type': 'application/json' };
    const noCredentials = await call(follower, 'PUT', '/api/queues/refused', json, '{}');
    expect(noCredentials.status).toBe(401);
    expect(noCredentials.headers.get('www-authenticate')).toMatch(/^Basic /);
    const wrongPassword = await call(
      follower,
      'PUT',
      '/api/queues/refused',
      { ...json, authorization: basic('ops', 'x') },
      '{}',
    );
    expect(wrongPassword.status).toBe(401);
    const noGrant = await call(
      follower,
      'PUT',
      '/api/queues/refused',
      { ...json, authorization: basic('app', 'app-pw') },
      '{}',
    );
    expect(noGrant).toMatchObject({ status: 403, body: { error: "user 'app' has no manage grant" } });
    const noHeader = await call(
      follower,
      'PUT',
      '/api/queues/refused',
      { authorization: OPS, 'content-type': 'application/json' },
      '{}',
    );
    expect(noHeader.status).toBe(403);
    expect(String(noHeader.body.error)).toContain('X-Quorate-Request: 1');
    // what an HTML form can send: a simple content type
    const form = await call(
      follower,
      'PUT',
      '/api/queues/refused',
      { ...CHANGE, authorization: OPS, 'content-type': 'text/plain' },
      '{}',
    );
    expect(form.status).toBe(415);
    const purgeNoHeader = await call(follower, 'DELETE', '/api/queues/refused/messages', {
      authorization: OPS,
    });
    expect(purgeNoHeader.status).toBe(403);
    const deleteNoCredentials = await call(follower, 'DELETE', '/api/queues/refused', CHANGE);
    expect(deleteNoCredentials.status).toBe(401);
    // a CORS preflight is never answered with an allow
    const preflight = await fetch(`${follower}/api/queues/refused`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'PUT' },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const badArgs = await call(
      follower,
      'PUT',
      '/api/queues/refused',
      { ...json, authorization: OPS },
      '{"maxLength":"ten"}',
    );
    expect(badArgs).toMatchObject({ status: 400, body: { error: 'maxLength must be an integer' } });
    expect(await queueOn(follower, 'refused')).toBeUndefined();
    expect(await queueOn(other, 'refused')).toBeUndefined();
  });

  it('declares, purges and deletes through the follower; the other member sees each change', async () => {
    const headers = { ...CHANGE, authorization: OPS, 'content-type': 'application/json; charset=utf-8' };
    const created = await call(
      follower,
      'PUT',
      '/api/queues/web%2Forders',
      headers,
      '{"maxLength":10,"deliveryLimit":4}',
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      created: true,
      queue: { name: 'web/orders', maxLength: 10, deliveryLimit: 4 },
    });
    const again = await call(follower, 'PUT', '/api/queues/web%2Forders', headers, '{"maxLength":10}');
    expect(again).toMatchObject({ status: 200, body: { created: false } });
    const conflict = await call(follower, 'PUT', '/api/queues/web%2Forders', headers, '{"maxLength":11}');
    expect(conflict.status).toBe(409);

    const conn = await connect({
      urls: [followerAmqp],
      reconnect: false,
      username: 'app',
      password: 'app-pw',
    });
    const s = await conn.openSender('web/orders');
    for (let i = 0; i < 3; i++) await s.send({ body: i }, { timeoutMs: 20_000 });
    await conn.close();
    await waitFor(async () => (await queueOn(other, 'web/orders'))?.messageCount === 3, {
      timeoutMs: 20_000,
      what: 'the other member to hold the 3 messages',
    });
    const listed = await call(other, 'GET', '/api/queues', { authorization: OPS });
    expect((listed.body.queues as Array<{ name: string }>).map((q) => q.name)).toContain('web/orders');

    const purged = await call(follower, 'DELETE', '/api/queues/web%2Forders/messages', {
      ...CHANGE,
      authorization: OPS,
    });
    expect(purged).toMatchObject({ status: 200, body: { name: 'web/orders', purged: 3 } });
    const deleted = await call(follower, 'DELETE', '/api/queues/web%2Forders', {
      ...CHANGE,
      authorization: OPS,
    });
    expect(deleted).toMatchObject({ status: 200, body: { name: 'web/orders', dropped: 0 } });
    await waitFor(async () => (await queueOn(other, 'web/orders')) === undefined, {
      timeoutMs: 20_000,
      what: 'the other member to drop the queue',
    });
    const gone = await call(follower, 'DELETE', '/api/queues/web%2Forders', {
      ...CHANGE,
      authorization: OPS,
    });
    expect(gone.status).toBe(404);
  }, 120_000);

  it('purges and deletes a topic subscription ($sub/...); a declare of a name no attach reaches is refused', async () => {
    const conn = await connect({
      urls: [followerAmqp],
      reconnect: false,
      username: 'app',
      password: 'app-pw',
    });
    const r = await conn.openReceiver('prices', { topic: true, durable: true, subscription: 'ticks' });
    await r.close(); // detach: the durable subscription stays
    const s = await conn.openSender('prices', { topic: true });
    for (let i = 0; i < 2; i++) await s.send({ body: i }, { timeoutMs: 20_000 });
    await conn.close();
    const listed = await call(follower, 'GET', '/api/queues', { authorization: OPS });
    const all = JSON.stringify(listed.body);
    const name = /"(\$sub\/[^"]*ticks)"/.exec(all)?.[1];
    expect(name, all).toBeDefined();
    const path = `/api/queues/${encodeURIComponent(name!)}`;
    const purged = await call(follower, 'DELETE', `${path}/messages`, { ...CHANGE, authorization: OPS });
    expect(purged).toMatchObject({ status: 200, body: { name, purged: 2 } });
    const deleted = await call(follower, 'DELETE', path, { ...CHANGE, authorization: OPS });
    expect(deleted).toMatchObject({ status: 200, body: { name, dropped: 0 } });
    expect(await queueOn(follower, name!)).toBeUndefined();

    const json = { ...CHANGE, authorization: OPS, 'content-type': 'application/json' };
    for (const bad of ['/queues/x', '/management', '$management'])
      expect(
        (await call(follower, 'PUT', `/api/queues/${encodeURIComponent(bad)}`, json, '{}')).status,
        bad,
      ).toBe(400);
  }, 120_000);
});
