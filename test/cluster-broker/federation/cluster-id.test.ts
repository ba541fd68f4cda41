/** A single node's cluster id (docs/federation.md#cluster-id): given, or generated once and kept. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerConfigError } from '../../../src/broker.js';
import { singleNodeClusterId } from '../../../src/cluster-broker/server/single-node-cluster-id.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-cluster-id-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('single-node cluster id', () => {
  it('is --cluster-id when given; an empty one is refused', async () => {
    expect(await singleNodeClusterId('eu', dir)).toBe('eu');
    await expect(singleNodeClusterId(' ', dir)).rejects.toThrow(BrokerConfigError);
  });

  it('is generated on first start, kept in the data dir and read back on the next', async () => {
    const first = await singleNodeClusterId(undefined, dir);
    expect(first).toMatch(/^single-[0-9a-f-]{36}$/);
    expect((await readFile(join(dir, 'cluster-id'), 'utf8')).trim()).toBe(first);
    expect(await singleNodeClusterId(undefined, dir)).toBe(first);
  });

  it('without a data dir is new on every start', async () => {
    expect(await singleNodeClusterId(undefined, undefined)).not.toBe(
      await singleNodeClusterId(undefined, undefined),
    );
  });
});
