/**
 * The file operations the event store makes, behind one interface so a test can stand in a
 * file system that loses what was not synced (a power loss, not just a killed process).
 *
 * Durability contract the store relies on (what a real disk gives, and what the power-loss test
 * double models): bytes written to a file survive a power loss only after that file's
 * `datasync`/`sync`; a created, renamed or removed directory entry survives only after
 * `syncDir` of its directory. Everything else may vanish, and the last unsynced write may
 * survive in part (a torn write).
 *
 * Paths are absolute or relative to the process; the store always passes `join(dir, name)`.
 */
import type { FileHandle } from 'node:fs/promises';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DIR_MODE, FILE_MODE } from './file-modes.js';
import { writeAll } from './write-all.js';

/** An open file the store writes sequentially. */
export interface DurableFile {
  /** Writes every byte of `data` at the file's end (append) or current position (create). */
  write(data: Uint8Array): Promise<void>;
  /** fdatasync: the file's data (and size) survive a power loss. */
  datasync(): Promise<void>;
  /** fsync: data and metadata survive a power loss. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A file opened for positioned reads. Log segments and snapshots may be past 2 GiB (one
 * `readFile` of them fails, and one buffer of them would pin that much memory): they are read
 * through this, in bounded chunks (chunked-reader.ts).
 */
export interface ReadableFile {
  /** The file's size in bytes when it was opened. */
  readonly size: number;
  /** `length` bytes from `position` (fewer only past the end of the file), in a buffer of their own. */
  read(position: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface DurableFs {
  /** mkdir -p. */
  mkdir(dir: string): Promise<void>;
  /** Opens for appending, creating the file if missing. */
  openAppend(path: string): Promise<DurableFile>;
  /** Creates (or empties) a file for writing from its start. */
  create(path: string): Promise<DurableFile>;
  /**
   * The whole file, for small files only (meta.json); rejects with an error whose `code` is
   * 'ENOENT' when it is missing. Segments, logs and snapshots are read with `openRead`.
   */
  readFile(path: string): Promise<Uint8Array>;
  /** Opens for positioned reads; rejects with an error whose `code` is 'ENOENT' when it is missing. */
  openRead(path: string): Promise<ReadableFile>;
  /** Names in a directory. */
  readdir(dir: string): Promise<string[]>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; no error when it is missing. */
  remove(path: string): Promise<void>;
  truncate(path: string, length: number): Promise<void>;
  copyFile(from: string, to: string): Promise<void>;
  /** fsync of an existing file by path (after truncate). */
  syncFile(path: string): Promise<void>;
  /** fsync of a directory: its entries (creates, renames, removes) survive a power loss. */
  syncDir(dir: string): Promise<void>;
}

class NodeDurableFile implements DurableFile {
  constructor(private readonly fh: FileHandle) {}
  write(data: Uint8Array): Promise<void> {
    return writeAll(this.fh, data);
  }
  datasync(): Promise<void> {
    return this.fh.datasync();
  }
  sync(): Promise<void> {
    return this.fh.sync();
  }
  close(): Promise<void> {
    return this.fh.close();
  }
}

class NodeReadableFile implements ReadableFile {
  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
  ) {}
  async read(position: number, length: number): Promise<Uint8Array> {
    const want = Math.max(0, Math.min(length, this.size - position));
    const out = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.fh.read(out, got, want - got, position + got);
      if (bytesRead === 0) break; // the file shrank since it was opened
      got += bytesRead;
    }
    return got === want ? out : out.subarray(0, got);
  }
  close(): Promise<void> {
    return this.fh.close();
  }
}

async function syncPath(path: string, flags: string): Promise<void> {
  const fh = await open(path, flags);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The real file system (node:fs/promises), one call per operation: no extra syncs. */
export const nodeDurableFs: DurableFs = {
  async mkdir(dir) {
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
  },
  async openAppend(path) {
    return new NodeDurableFile(await open(path, 'a', FILE_MODE));
  },
  async create(path) {
    return new NodeDurableFile(await open(path, 'w', FILE_MODE));
  },
  readFile: (path) => readFile(path),
  async openRead(path) {
    const fh = await open(path, 'r');
    try {
      return new NodeReadableFile(fh, (await fh.stat()).size);
    } catch (err) {
      await fh.close();
      throw err;
    }
  },
  readdir: (dir) => readdir(dir),
  rename: (from, to) => rename(from, to),
  remove: (path) => rm(path, { force: true }),
  truncate: (path, length) => truncate(path, length),
  copyFile: (from, to) => copyFile(from, to),
  syncFile: (path) => syncPath(path, 'r+'),
  syncDir: (dir) => syncPath(dir, 'r'),
};

/**
 * Replaces `file` atomically and durably: a temp file next to it, written and synced, renamed over
 * it, then the directory synced. A crash leaves the old content or the new one, never a mix.
 */
export async function writeFileAtomic(
  fs: DurableFs,
  file: string,
  chunks: readonly Uint8Array[],
): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await fs.create(tmp);
  try {
    await writeGathered(fh, chunks);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
  await fs.syncDir(dirname(file));
}

/** Chunks at least this large are written as they are (gathering them saves no write). */
const DIRECT_BYTES = 64 * 1024;
/** Smaller chunks are gathered into writes of up to this size. */
const GATHER_BYTES = 1024 * 1024;

/**
 * Writes `chunks` one after the other, gathering small ones into writes of up to 1 MiB rather
 * than one write per chunk (a store snapshot comes as two parts per message).
 */
async function writeGathered(fh: DurableFile, chunks: readonly Uint8Array[]): Promise<void> {
  let small = 0;
  for (const c of chunks) if (c.length < DIRECT_BYTES) small += c.length;
  const staging = Buffer.allocUnsafe(Math.min(GATHER_BYTES, small));
  let used = 0;
  const flush = async () => {
    if (used === 0) return;
    await fh.write(staging.subarray(0, used));
    used = 0;
  };
  for (const c of chunks) {
    if (c.length >= DIRECT_BYTES) {
      await flush();
      await fh.write(c);
      continue;
    }
    if (used + c.length > staging.length) await flush();
    staging.set(c, used);
    used += c.length;
  }
  await flush();
}
