/**
 * A new log segment file of the event store (event-store.ts), shared by its open (a fresh store)
 * and its rolls to a new segment (file-event-store.ts).
 */
import { join } from 'node:path';
import type { DurableFile, DurableFs } from '../files/durable-fs.js';
import { segmentHeader } from './segment-header.js';
import { segmentName } from './segments.js';

/** Creates a segment file holding just its header, durably (a roll or a fresh store; not the hot path). */
export async function createSegment(fs: DurableFs, dir: string, start: number): Promise<DurableFile> {
  const fh = await fs.openAppend(join(dir, segmentName(start)));
  try {
    await fh.write(segmentHeader(start));
    await fh.datasync();
  } catch (err) {
    await fh.close();
    throw err;
  }
  await fs.syncDir(dir);
  return fh;
}
