/**
 * The CLI broker as a real process: every message settled `accepted` survives `kill -9` and a
 * restart on the same data dir; SIGTERM stops it cleanly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  closeConnection,
  connect,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { spawnBroker } from '../../../support/broker-process.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('quorate-broker process', () => {
  it('prints one ready line and stops cleanly on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-term-'));
    dirs.push(dir);
    const b = await spawnBroker(['--port', '0', '--data-dir', dir]);
    expect(b.port).toBeGreaterThan(0);
    expect(b.pid).toBe(b.child.pid);
    const conn = await connect({ port: b.port });
    expect((await sendAll(conn, 'term', [{ body: 'x' }]))[0]!.state).toBe('accepted');
    await closeConnection(conn);
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('keeps every accepted message across kill -9 and restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-kill-'));
    dirs.push(dir);
    const n = 500;
    const b1 = await spawnBroker(['--port', '0', '--data-dir', dir]);
    const c1 = await connect({ port: b1.port });
    const dedup = { desired_capabilities: ['quorate:dedup'] };
    const outcomes = await sendAll(
      c1,
      'durable',
      Array.from({ length: n }, (_, i) => ({ body: `m-${i}`, message_id: `k-${i}`, durable: true })),
      dedup,
    );
    expect(outcomes.every((o) => o.state === 'accepted')).toBe(true);
    // acquire a few without settling: they must come back after the crash too
    const r1 = new TestReceiver(c1, 'durable');
    await r1.next(5);
    process.kill(b1.pid, 'SIGKILL');
    expect(await b1.exited).toBe('SIGKILL');
    c1.close();

    const b2 = await spawnBroker(['--port', '0', '--data-dir', dir]);
    const c2 = await connect({ port: b2.port });
    const r2 = new TestReceiver(c2, 'durable');
    const got = await r2.next(n, 20_000);
    expect(got.map((g) => g.message.body)).toEqual(Array.from({ length: n }, (_, i) => `m-${i}`));
    for (const g of got) g.delivery.accept();
    // a re-send of an acknowledged message-id is still recognised as a duplicate after the crash
    const dup = await sendAll(c2, 'durable', [{ body: 'again', message_id: 'k-0' }], dedup);
    expect(dup[0]!.state).toBe('accepted');
    r2.link.add_credit(1);
    expect(await r2.drainFor(300)).toEqual([]);
    await closeConnection(c2);
    b2.child.kill('SIGTERM');
    expect(await b2.exited).toBe(0);
  });
});
