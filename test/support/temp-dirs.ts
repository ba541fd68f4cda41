/** Temp dirs for one test file, each removed once the file's tests are done. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Registers the afterAll that removes them and returns the maker of a fresh dir named
 * `<prefix>XXXXXX` under the OS temp dir; call once at the top of a test file.
 */
export function useTempDirs(prefix: string): () => Promise<string> {
  const dirs: string[] = [];
  async function tempDir(): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  }
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  return tempDir;
}
