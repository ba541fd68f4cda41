import { join } from 'node:path';
import { ChunkedReader, readStateChunks, withChunkedReader } from '../files/chunked-reader.js';
import { crc32 } from '../files/crc32.js';
import { type DurableFs, nodeDurableFs, writeFileAtomic } from '../files/durable-fs.js';
import { StoreCorruptionError } from './errors.js';

export const SNAPSHOT_FILE = 'snapshot.bin';
const MAGIC = [0x51, 0x53, 0x46, 0x31];
const HEADER_BYTES = 4 + 8 + 8 + 4;

export interface SnapshotContents {
  index: number;
  state: Uint8Array;
}

/** A snapshot to write: its state as one buffer or as parts written one after the other. */
export interface SnapshotToWrite {
  index: number;
  state: Uint8Array | readonly Uint8Array[];
}

export async function fsyncDir(dir: string, fs: DurableFs = nodeDurableFs): Promise<void> {
  await fs.syncDir(dir);
}

export async function writeSnapshotFile(
  dir: string,
  snap: SnapshotToWrite,
  fs: DurableFs = nodeDurableFs,
): Promise<void> {
  const parts = snap.state instanceof Uint8Array ? [snap.state] : snap.state;
  let length = 0;
  let crc = 0;
  for (const p of parts) {
    length += p.length;
    crc = crc32(p, crc);
  }
  const header = new Uint8Array(HEADER_BYTES);
  const view = new DataView(header.buffer);
  header.set(MAGIC, 0);
  view.setFloat64(4, snap.index, true);
  view.setFloat64(12, length, true);
  view.setUint32(20, crc, true);
  await writeFileAtomic(fs, join(dir, SNAPSHOT_FILE), [header, ...parts]);
}

/**
 * The snapshot, or undefined when there is none. A damaged snapshot is a StoreCorruptionError,
 * never skipped. Read in chunks (any file size: one `readFile` fails past 2 GiB), its checksum
 * computed as they come, into one buffer of the state's length, checked against the file's size
 * before it is allocated (the state is restored from one buffer: see readStateChunks).
 */
export async function readSnapshotFile(
  dir: string,
  fs: DurableFs = nodeDurableFs,
): Promise<SnapshotContents | undefined> {
  const file = join(dir, SNAPSHOT_FILE);
  let reader: ChunkedReader;
  try {
    reader = await ChunkedReader.open(fs, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const head = (await reader.bytes(0, HEADER_BYTES)).slice();
    if (head.length < HEADER_BYTES || MAGIC.some((b, i) => head[i] !== b)) {
      throw new StoreCorruptionError(file, 0, 'not a snapshot (bad magic or too short)');
    }
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const index = view.getFloat64(4, true);
    const length = view.getFloat64(12, true);
    const crc = view.getUint32(20, true);
    if (!Number.isSafeInteger(index) || index < 0) {
      throw new StoreCorruptionError(file, 4, `the snapshot's log index (${index}) is not a safe integer`);
    }
    const held = reader.size - HEADER_BYTES;
    if (held !== length) {
      throw new StoreCorruptionError(
        file,
        12,
        `the snapshot says ${length} state bytes, the file holds ${held}`,
      );
    }
    const { state, crc: actual } = await readStateChunks(reader, HEADER_BYTES, held, file);
    if (actual !== crc) {
      throw new StoreCorruptionError(file, HEADER_BYTES, 'snapshot checksum mismatch');
    }
    return { index, state };
  } finally {
    await reader.close();
  }
}

/** The snapshot's log index from its header, if the header is whole (for a repair report). */
export async function snapshotIndexHint(fs: DurableFs, file: string): Promise<number | undefined> {
  try {
    return await withChunkedReader(fs, file, async (reader) => {
      const head = await reader.bytes(0, 12);
      if (head.length < 12) return undefined;
      const index = new DataView(head.buffer, head.byteOffset, head.byteLength).getFloat64(4, true);
      return Number.isSafeInteger(index) && index >= 0 ? index : undefined;
    });
  } catch {
    return undefined;
  }
}

export async function removeStaleTemp(dir: string, fs: DurableFs = nodeDurableFs): Promise<void> {
  await fs.remove(join(dir, `${SNAPSHOT_FILE}.tmp`));
}
