import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeDurableFs, writeFileAtomic } from '../../../src/cluster-broker/files/durable-fs.js';

describe('writeFileAtomic', () => {
  it('writes many small chunks and large ones, in order, byte for byte', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quorate-durable-fs-'));
    const file = join(dir, 'f.bin');
    const chunks: Uint8Array[] = [];
    // small chunks past one 1 MiB gathered write, a chunk written as it is in between, an empty one
    for (let i = 0; i < 3_000; i++) chunks.push(new Uint8Array(500).fill(i % 251));
    chunks.push(new Uint8Array(200 * 1024).fill(7), new Uint8Array(0));
    for (let i = 0; i < 10; i++) chunks.push(new Uint8Array(1 + i).fill(200 + i));
    try {
      await writeFileAtomic(nodeDurableFs, file, chunks);
      expect(Buffer.compare(await readFile(file), Buffer.concat(chunks))).toBe(0);
      // a single small chunk (a vote record)
      await writeFileAtomic(nodeDurableFs, file, [Uint8Array.of(1, 2, 3)]);
      expect([...(await readFile(file))]).toEqual([1, 2, 3]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
