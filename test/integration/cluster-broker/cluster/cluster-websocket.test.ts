/**
 * `quorate-broker cluster --ws-base-port` (docs/websocket.md#broker): every member-ready line
 * names the member's ws:// URL, and a running member advertises each member's `quorate:ws-url`
 * in its Open's failover-server-list and on `$cluster/membership` (docs/websocket.md#membership).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { connect } from '../../../../src/index.js';
import { failoverListFromOpenProperties, mapGet } from '../../../../src/wire-extensions.js';
import { waitFor } from '../../../support/net.js';

const ENTRY = 'src/cluster-broker/cli/main.ts';
const ROOT = new URL('../../../..', import.meta.url).pathname;
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface MemberReady {
  event: string;
  id: string;
  wsUrl: string | null;
}

it('member-ready lines carry each ws:// URL; the Open and $cluster/membership list them all', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-cluster-ws-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ENTRY,
      'cluster',
      '--nodes',
      '3',
      '--base-port',
      '0',
      '--ws-base-port',
      '0',
      '--data-dir',
      dir,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr?.resume();
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
  await waitFor(() => stdout.includes('"cluster-ready"'), { timeoutMs: 120_000, what: 'cluster-ready' });
  const ready = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as MemberReady)
    .filter((e) => e.event === 'member-ready');
  expect(ready.map((r) => r.id).sort()).toEqual(['n1', 'n2', 'n3']);
  const wsUrls = ready.map((r) => r.wsUrl);
  for (const u of wsUrls) expect(u).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  expect(new Set(wsUrls).size).toBe(3);
  const wsPorts = wsUrls.map((u) => Number(new URL(u!).port)).sort();

  // a member reached over WebSocket: its Open lists every member's ws URL (once all serve)
  // cluster-ready means started, not quorate: retry until the member serves
  let conn: Awaited<ReturnType<typeof connect>> | undefined;
  await waitFor(
    async () => {
      conn = await connect({ urls: [wsUrls[0]!], reconnect: false, timeoutMs: 30_000 }).catch(
        () => undefined,
      );
      return conn !== undefined;
    },
    { timeoutMs: 90_000, what: 'n1 serving over WebSocket', intervalMs: 500 },
  );
  if (conn === undefined) throw new Error('unreachable');
  cleanups.push(() => conn!.close({ timeoutMs: 2_000 }).catch(() => undefined));
  const listed = failoverListFromOpenProperties(conn.remoteOpen?.properties);
  expect(listed?.members).toHaveLength(3);
  const openWs = listed!.members.map((m) => m.webSocket);
  for (const w of openWs) expect(w).toMatchObject({ scheme: 'ws', host: '127.0.0.1' });
  expect(openWs.map((w) => w!.port).sort()).toEqual(wsPorts);

  // the live feed carries the same key
  const feed = await conn.openReceiver('$cluster/membership');
  const d = await feed.receive({ timeoutMs: 30_000 });
  const fed = (d.message.body as unknown[]).map((m) => String(mapGet(m, 'quorate:ws-url')));
  expect(fed.map((u) => Number(new URL(u).port)).sort()).toEqual(wsPorts);
}, 180_000);
