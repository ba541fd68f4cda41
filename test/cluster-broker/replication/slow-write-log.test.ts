/**
 * A member whose disk holds a write says so at warn: every acknowledgement of the cluster waited
 * for it, and it is what an operator looks for when commits stall (docs/production.md#slow-disk).
 * The real Replica alone (a one-member cluster) on the real file system, with a clock that moves
 * on while the write's fsync runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  type DurableFile,
  type DurableFs,
  nodeDurableFs,
} from '../../../src/cluster-broker/files/durable-fs.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function runWithFsyncTaking(syncMs: number): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-slow-write-'));
  dirs.push(dir);
  let now = 1_000;
  let slow = false;
  const slowed = (f: DurableFile): DurableFile => ({
    write: (d) => f.write(d),
    datasync: async () => {
      if (slow) now += syncMs;
      await f.datasync();
    },
    sync: async () => {
      if (slow) now += syncMs;
      await f.sync();
    },
    close: () => f.close(),
  });
  const fs: DurableFs = {
    ...nodeDurableFs,
    openAppend: async (p) => slowed(await nodeDurableFs.openAppend(p)),
    create: async (p) => slowed(await nodeDurableFs.create(p)),
  };
  let tick: () => void = () => {};
  const warnings: string[] = [];
  const note = (_fields: unknown, msg?: string) => void (msg !== undefined && warnings.push(msg));
  const replica = await Replica.start(
    {
      id: 'n1',
      clusterId: 'c',
      members: { n1: { host: '127.0.0.1', port: 1 } },
      dataDir: dir,
      fs,
      stateMachine: { apply: () => {}, restore: () => {} },
      clock: () => now,
      logger: { warn: note },
    },
    {
      transport: () => ({ start: async () => 0, send: () => {}, close: async () => {} }),
      timer: (fire) => {
        tick = fire;
        return { arm: () => {}, stop: () => {} };
      },
    },
  );
  try {
    // a one-member cluster elects itself once its election timeout has passed
    for (let i = 0; i < 200 && !replica.isLeader(); i++) {
      now += 50;
      tick();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect(replica.isLeader()).toBe(true);
    slow = true;
    await replica.propose(new Uint8Array([1, 2, 3]));
  } finally {
    await replica.close();
  }
  return warnings;
}

it('a write whose fsync takes over a second is logged at warn', async () => {
  const warnings = await runWithFsyncTaking(1_500);
  expect(warnings).toContain('replication: the disk held a write; commits waited for it');
});

it('a quick write is not', async () => {
  const warnings = await runWithFsyncTaking(5);
  expect(warnings).not.toContain('replication: the disk held a write; commits waited for it');
});
