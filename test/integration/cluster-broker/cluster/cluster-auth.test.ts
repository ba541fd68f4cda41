/**
 * Strangers on the cluster port of a real 3-member cluster (startCluster: member processes, a
 * secret it made): impostor member processes with the right ids and no or a wrong secret, the
 * issue's forged frames, oversized pre-auth frames and a stalled handshake. The cluster keeps
 * serving and loses nothing; the forged snapshot, delete, injected message and fake address
 * never take effect.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { brokerEntryNodeArgs } from '../../../../src/cluster-broker/supervisor/index.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  parseList,
  portOf,
  probe,
  range,
  sendVia,
  startTestCluster,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { FAKE_HOST, forgedFrames, impersonate } from '../../../cluster-broker/cluster/impostor.js';
import { header, rawConnection } from '../../../cluster-broker/cluster/transport-fixture.js';
import { freePort, waitFor } from '../../../support/net.js';

const QUEUE = 'auth-orders';
let handle: ClusterHandle;
const scratch = mkdtempSync(join(tmpdir(), 'quorate-cluster-auth-'));
const impostors: ChildProcess[] = [];

/**
 * sendVia, again after an election on this loaded machine ("outcome unknown"): the members drop
 * a re-sent message-id as a duplicate, so a retry never adds a copy.
 */
async function sendSurely(id: string, queue: string, bodies: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sendVia(handle, id, queue, bodies);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      await waitServing(handle);
    }
  }
}

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
  await sendSurely('n1', QUEUE, range('m', 1000));
});

afterAll(async () => {
  for (const p of impostors) if (p.exitCode === null) p.kill('SIGKILL');
  await handle?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function member(id: string): { pid: number; clusterPort: number } {
  const m = handle.members().find((x) => x.id === id)!;
  return { pid: m.pid!, clusterPort: m.clusterPort };
}

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0);
}

/** A real `quorate-broker node` claiming to be n2, dialling n1 and n3 at their cluster ports. */
async function startImpostor(
  secretFile: string | undefined,
): Promise<{ proc: ChildProcess; stderr: () => string }> {
  const own = await freePort();
  const peers = `n1=127.0.0.1:${member('n1').clusterPort},n2=127.0.0.1:${own},n3=127.0.0.1:${member('n3').clusterPort}`;
  const args = [
    ...brokerEntryNodeArgs(),
    'node',
    '--id',
    'n2',
    '--port',
    '0',
    '--peers',
    peers,
    '--data-dir',
    mkdtempSync(join(scratch, 'impostor-')),
    // no secret: the insecure switch, or the impostor would refuse to start at all
    ...(secretFile ? ['--cluster-secret-file', secretFile] : ['--insecure-no-secret']),
  ];
  const proc = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  impostors.push(proc);
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  proc.stdout!.resume();
  return { proc, stderr: () => err };
}

describe('a cluster with a secret', () => {
  it('runs on a random secret it created, readable by its owner only', () => {
    expect(handle.clusterSecretFile).toBe(join(handle.dataDir, 'cluster-secret'));
    expect(statSync(handle.clusterSecretFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(handle.clusterSecretFile, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses impostor member processes with the right ids and no or a wrong secret, and keeps serving', async () => {
    const wrong = join(scratch, 'wrong-secret');
    writeFileSync(wrong, 'f'.repeat(64), { mode: 0o600 });
    for (const secretFile of [undefined, wrong]) {
      const imp = await startImpostor(secretFile);
      await waitFor(
        () => {
          const e = imp.stderr();
          return (
            /handshake with a member failed.*"peer":"n1"/.test(e) &&
            /handshake with a member failed.*"peer":"n3"/.test(e)
          );
        },
        {
          timeoutMs: 60_000,
          what: `the impostor (${secretFile ? 'wrong' : 'no'} secret) being refused by n1 and n3`,
        },
      );
      // the cluster serves while the impostor keeps trying
      await sendSurely('n3', `${QUEUE}-during`, range(secretFile ? 'w' : 'n', 20));
      imp.proc.kill('SIGKILL');
    }
    await waitServing(handle);
  });

  it("refuses the probe's forged snapshot, forward and status frames on every member", async () => {
    for (const victim of handle.ids) {
      const claimed = victim === 'n1' ? 'n2' : 'n1';
      for (const secret of [undefined, Buffer.from('0123456789abcdef0123456789abcdef')]) {
        const out = await impersonate({
          port: member(victim).clusterPort,
          clusterId: 'quorate',
          victim,
          claimed,
          secret,
          frames: forgedFrames(victim, claimed, QUEUE),
        });
        expect(out).toEqual({ challenged: true, accepted: false, closedByMember: true });
      }
    }
  });

  it('refuses oversized frames before authentication without the member growing', async () => {
    const { pid, clusterPort } = member('n1');
    const before = rssKiB(pid);
    // the probe's two 256 MiB frame headers, each followed by 64 MiB of body
    const results = await Promise.all(
      [0, 1].map(() => rawConnection(clusterPort, header(256 * 1024 * 1024), { stream: 64 * 1024 * 1024 })),
    );
    for (const r of results) expect(r.closedByMember).toBe(true);
    const after = rssKiB(pid);
    expect(after - before).toBeLessThan(48 * 1024);
  });

  it('closes a stalled handshake within 2 s', async () => {
    const r = await rawConnection(member('n2').clusterPort, new Uint8Array(0), { waitMs: 15_000 });
    expect(r.closedByMember).toBe(true);
    // the deadline is 1.8 s; the slack is for timers late on a loaded machine
    expect(r.elapsedMs).toBeLessThan(3_000);
  });

  it('lost nothing, took no injected message and lists no fake address', async () => {
    await waitServing(handle);
    for (const id of handle.ids) {
      const list = await probe(portOf(handle, id));
      expect(list?.map((m) => m.host)).not.toContain(FAKE_HOST);
      expect(list?.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
    }
    const o = await open(portOf(handle, 'n2'));
    try {
      const c = new Collector(o.conn, QUEUE, { credit: 200 });
      await c.until(1000, 60_000);
      expect(c.bodies).toEqual(range('m', 1000));
      const feed = new Collector(o.conn, '$cluster/membership');
      await feed.until(1, 10_000);
      expect(parseList(JSON.parse(feed.bodies[0]!)).map((m) => m.host)).not.toContain(FAKE_HOST);
      // nothing more arrives (no injected message)
      await sendSurely('n1', QUEUE, ['after']);
      await c.until(1001, 30_000);
      expect(c.bodies.slice(1000)).toEqual(['after']);
    } finally {
      await closeConn(o.conn);
    }
  });
});
