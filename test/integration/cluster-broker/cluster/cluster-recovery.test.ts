/**
 * A cluster member whose store is damaged or emptied (issue 10, item 2), with real member
 * processes and real files: it keeps the damaged files aside, rejoins, takes no part in votes or
 * commits until it has caught up, and the cluster loses nothing acknowledged, even when the only
 * other copy of the newest entries is on one member that comes back last.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { defaultMemberCommand } from '../../../../src/cluster-broker/supervisor/index.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  portOf,
  range,
  sendVia,
  serving,
  startTestCluster,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { waitFor } from '../../../support/net.js';

let handle: ClusterHandle;
/** --snapshot-every per member, read at each (re)start: the default keeps every entry in the log. */
const snapshotEvery = new Map<string, number>();

beforeAll(async () => {
  handle = await startTestCluster({
    memberCommand: (m) => {
      const c = defaultMemberCommand(m);
      return { ...c, args: [...c.args, '--snapshot-every', String(snapshotEvery.get(m.id) ?? 100_000)] };
    },
  });
  await waitServing(handle, handle.ids, 60_000);
}, 120_000);

afterAll(async () => {
  await handle?.stop();
});

const raftDir = (id: string): string => join(handle.dataDir, id, 'raft');
const quarantine = (id: string): string => join(handle.dataDir, id, 'quarantine');

function quarantinedFiles(id: string): string[] {
  const q = quarantine(id);
  if (!existsSync(q)) return [];
  return readdirSync(q).flatMap((t) => readdirSync(join(q, t)));
}

/** Flip a byte inside the first entry record after the log's base record (log-records.ts layout). */
function damageFirstLogEntry(id: string): void {
  const file = join(raftDir(id), 'log');
  const log = readFileSync(file);
  const first = 12 + log.readUInt32BE(0); // header + body of the base record
  if (log.length < first + 12 + 18) throw new Error(`log of ${id} holds no entry after its base record`);
  log[first + 12 + 5] = log[first + 12 + 5]! ^ 0x10; // in the entry's index
  writeFileSync(file, log);
}

async function receive(id: string, address: string, n: number): Promise<string[]> {
  const o = await open(portOf(handle, id));
  try {
    const c = new Collector(o.conn, address, { exactly: n });
    await c.until(n, 60_000);
    return c.bodies;
  } finally {
    await closeConn(o.conn);
  }
}

/** For `ms`, neither member serves clients (no leader can be elected without the missing one). */
async function expectNobodyServes(ids: string[], ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    for (const id of ids) expect(await serving(handle, id), `${id} serves`).toBe(false);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * n3 down; `sent` acknowledged by n1 + n2 only; every member down; `damage(n1)`; n1 and n3 back:
 * n3 lacks the entries and n1 lost them, so no leader may be elected until n2 returns.
 */
async function onlyCopyComesBackLast(queue: string, damage: () => void): Promise<void> {
  await handle.kill('n3');
  await waitServing(handle, ['n1', 'n2'], 60_000);
  const sent = range(queue, 45);
  await sendVia(handle, 'n1', queue, sent);
  await Promise.all([handle.kill('n1'), handle.kill('n2')]);
  damage();
  await Promise.all([handle.restart('n1'), handle.restart('n3')]);
  // without the recovery rules n1 votes for n3, n3 leads and n2's entries are overwritten
  await expectNobodyServes(['n1', 'n3'], 5_000);
  await handle.restart('n2');
  await waitServing(handle, handle.ids, 90_000);
  const got = await receive('n1', queue, sent.length);
  expect(new Set(got)).toEqual(new Set(sent));
}

describe('a damaged or emptied member', () => {
  it('log damaged on one member, the only other copy on a member that comes back last: nothing lost', async () => {
    await onlyCopyComesBackLast('q-log', () => damageFirstLogEntry('n1'));
    expect(quarantinedFiles('n1')).toContain('log');
  });

  it('an emptied data dir: the member does not vote until caught up, nothing lost', async () => {
    await onlyCopyComesBackLast('q-empty', () => rmSync(join(handle.dataDir, 'n1'), { recursive: true }));
  });

  it('a corrupt vote record: quarantined, the member rejoins and serves, nothing lost', async () => {
    const sent = range('q-meta', 20);
    await sendVia(handle, 'n2', 'q-meta', sent);
    await handle.kill('n3');
    const metaPath = join(raftDir('n3'), 'meta.json');
    const meta = readFileSync(metaPath);
    meta[meta.length - 3] = meta[meta.length - 3]! ^ 0x01;
    writeFileSync(metaPath, meta);
    await handle.restart('n3');
    await waitServing(handle, handle.ids, 90_000);
    expect(quarantinedFiles('n3')).toContain('meta.json');
    expect(new Set(await receive('n3', 'q-meta', sent.length))).toEqual(new Set(sent));
  });

  it('a bad snapshot: quarantined, the member catches up from the leader and serves everything', async () => {
    snapshotEvery.set('n2', 10);
    await handle.restart('n2');
    await waitServing(handle, handle.ids, 90_000);
    const sent = range('q-snap', 60);
    await sendVia(handle, 'n1', 'q-snap', sent);
    const snapPath = join(raftDir('n2'), 'snapshot');
    await waitFor(() => existsSync(snapPath), { timeoutMs: 60_000, what: 'a snapshot on n2' });
    await handle.kill('n2');
    snapshotEvery.delete('n2');
    const snap = readFileSync(snapPath);
    snap[snap.length - 1] = snap[snap.length - 1]! ^ 0x01;
    writeFileSync(snapPath, snap);
    await handle.restart('n2');
    await waitServing(handle, handle.ids, 90_000);
    expect(quarantinedFiles('n2')).toContain('snapshot');
    expect(new Set(await receive('n2', 'q-snap', sent.length))).toEqual(new Set(sent));
  }, 240_000); // its own waits (serving, the snapshot) allow up to 90 s each on a loaded machine
});
