/**
 * How the file storage (file-storage.ts) reads its files at recovery: whole or in bounded chunks,
 * a missing file being an answer (undefined) rather than an error.
 */
import { ChunkedReader } from '../files/chunked-reader.js';
import type { DurableFs } from '../files/durable-fs.js';

export function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** `file` whole (meta.json: a few hundred bytes), or undefined when it is missing. */
export async function readIfExists(fs: DurableFs, file: string): Promise<Buffer | undefined> {
  try {
    const data = await fs.readFile(file);
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/**
 * Runs `use` on `file` read in bounded chunks (the log and the snapshot may be past 2 GiB, where
 * one readFile fails: docs/production.md#store-size), or returns undefined when it is missing.
 */
export async function readChunkedIfExists<T>(
  fs: DurableFs,
  file: string,
  use: (reader: ChunkedReader) => Promise<T>,
): Promise<T | undefined> {
  let reader: ChunkedReader;
  try {
    reader = await ChunkedReader.open(fs, file);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  try {
    return await use(reader);
  } finally {
    await reader.close();
  }
}
