/**
 * The file storage's `snapshot` file (file-storage.ts): a checksummed head (crc32, index, term)
 * then the state, written as parts and read back in chunks.
 */
import { type ChunkedReader, readStateChunks } from '../files/chunked-reader.js';
import { crc32 } from '../files/crc32.js';
import type { Snapshot } from './raft/types.js';
import { isCountable } from './safe-numbers.js';

/**
 * The snapshot file as parts: [crc32, index, term] then the state itself, referenced rather
 * than copied (a deep queue's state is tens of MiB; two copies of it showed in profiles).
 */
export function encodeSnapshot(s: Snapshot): Uint8Array[] {
  const head = Buffer.allocUnsafe(20);
  head.writeDoubleBE(s.index, 4);
  head.writeDoubleBE(s.term, 12);
  const parts = s.data instanceof Uint8Array ? [s.data] : s.data;
  let crc = crc32(head.subarray(4));
  for (const p of parts) crc = crc32(p, crc);
  head.writeUInt32BE(crc, 0);
  return [head, ...parts];
}

const SNAPSHOT_HEAD = 20;

/**
 * The snapshot file read in chunks, or why it cannot be trusted: its state read into one buffer
 * (the state machine restores from one), the checksum computed as the chunks come.
 */
export async function readSnapshot(reader: ChunkedReader, file: string): Promise<Snapshot | string> {
  if (reader.size < SNAPSHOT_HEAD) return 'checksum mismatch';
  const head = Buffer.from(await reader.bytes(0, SNAPSHOT_HEAD));
  const { state, crc } = await readStateChunks(
    reader,
    SNAPSHOT_HEAD,
    reader.size - SNAPSHOT_HEAD,
    file,
    crc32(head.subarray(4)),
  );
  if (crc !== head.readUInt32BE(0)) return 'checksum mismatch';
  const index = head.readDoubleBE(4);
  const term = head.readDoubleBE(12);
  if (!isCountable(index) || !isCountable(term))
    return `index ${index} / term ${term} outside the safe integers`;
  return { index, term, data: state };
}
