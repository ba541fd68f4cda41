import type { FileHandle } from 'node:fs/promises';
import { StoreError } from './errors.js';

/** Writes every byte (a file write may in principle be partial), at the file's current position. */
export async function writeAll(fh: FileHandle, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off, null);
    if (bytesWritten <= 0) throw new StoreError('a log write made no progress');
    off += bytesWritten;
  }
}
