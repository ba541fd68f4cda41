/** Log segment files: `log-<first index, 16 digits>.seg`, each a run of framed event records. */
import { join } from 'node:path';
import { type DurableFs, nodeDurableFs } from '../files/durable-fs.js';
import { StoreCorruptionError } from './errors.js';

/**
 * A segment is closed and a new one started once it holds this many bytes (a whole group commit
 * past it still lands in it), whether or not a compaction is due: a store of any size is a run of
 * segments of about this size, and a compaction deletes whole segments
 * (docs/production.md#store-size).
 */
export const MAX_SEGMENT_BYTES = 256 * 1024 * 1024;

const SEGMENT_RE = /^log-(\d{16})\.seg$/;

export interface SegmentFile {
  /** Log index of its first record (indexes start at 1). */
  start: number;
  name: string;
}

export function segmentName(start: number): string {
  return `log-${String(start).padStart(16, '0')}.seg`;
}

/** Segment files in `dir`, ascending by first index. */
export async function listSegments(dir: string, fs: DurableFs = nodeDurableFs): Promise<SegmentFile[]> {
  const out: SegmentFile[] = [];
  for (const name of await fs.readdir(dir)) {
    const m = SEGMENT_RE.exec(name);
    if (!m) continue;
    const start = Number(m[1]);
    // 16 digits can name an index past 2^53, where adding 1 changes nothing: never trust it
    if (!Number.isSafeInteger(start) || start < 1) {
      throw new StoreCorruptionError(
        join(dir, name),
        0,
        `a segment name whose first index (${m[1]}) is not a safe integer`,
      );
    }
    out.push({ start, name });
  }
  return out.sort((a, b) => a.start - b.start);
}
