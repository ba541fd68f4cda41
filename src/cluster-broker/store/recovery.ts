/**
 * Opening a store directory: load the snapshot, replay the segments after it, cut a torn tail
 * (logged at warn), and refuse to open on corruption (StoreCorruptionError naming the file and
 * offset) unless asked to repair. The torn-tail rule is in damage.ts.
 *
 * Repair keeps the longest intact prefix of the log: the snapshot (if readable) and every record
 * before the first damage. Everything from the damage on is set aside in the quarantine
 * directory, including valid records after it: replaying events past a missing one would build
 * a state that never existed (a later settle could remove the wrong message).
 */
import { join } from 'node:path';
import type { Logger } from '../../common/logger.js';
import { BrokerState } from '../core/broker-state.js';
import { decodeEvent } from '../core/event-codec.js';
import { classifyTail, countRecords } from './damage.js';
import type { DurableFs } from './durable-fs.js';
import { StoreCorruptionError } from './errors.js';
import { Quarantine } from './quarantine.js';
import { RECORD_HEADER_BYTES, scanRecords } from './record-format.js';
import { checkSegmentHeader, SEGMENT_HEADER_BYTES } from './segment-header.js';
import { listSegments, type SegmentFile } from './segments.js';
import { readSnapshotFile, type SnapshotContents } from './snapshot-file.js';

/** The store's logger: the common {@link Logger} (the broker's logger fits). */
export type StoreLogger = Logger;

/** What a repair did (only when it set something aside). */
export interface RepairReport {
  /** `<data dir>/quarantine/<time>`. */
  quarantineDir: string;
  /** Names of the files set aside there. */
  files: string[];
  /** Log records dropped: the damaged ones (at least one per damaged stretch) and every record after them. */
  droppedRecords: number;
  /** Set when the snapshot was unreadable and set aside: the log index it covered, if its header said. */
  droppedSnapshot?: { index: number | undefined };
  /** Events kept: the state is the one after this log index. */
  keptIndex: number;
}

export interface RecoveredLog {
  state: BrokerState;
  index: number;
  snapshotIndex: number;
  recoveredEvents: number;
  truncatedBytes: number;
  segmentsDeleted: number;
  /** The last segment, when appends continue in it (its records end exactly at `index`). */
  appendTo: { name: string; start: number; bytes: number } | undefined;
  repair: RepairReport | undefined;
}

/** Reads the snapshot's index from its header, if the header is whole (for the repair report). */
async function snapshotIndexHint(fs: DurableFs, path: string): Promise<number | undefined> {
  try {
    const buf = await fs.readFile(path);
    if (buf.length < 12) return undefined;
    const index = new DataView(buf.buffer, buf.byteOffset, buf.byteLength).getFloat64(4, true);
    return Number.isSafeInteger(index) && index >= 0 ? index : undefined;
  } catch {
    return undefined;
  }
}

interface KeptSegment {
  name: string;
  start: number;
  /** Record bytes after its header. */
  bytes: number;
  /** Log index of its last record. */
  end: number;
}

/** A segment a repair cut at `cutAt` (undefined if it was moved whole: nothing intact in it). */
function keptSegment(seg: SegmentFile, cutAt: number, records: number): KeptSegment | undefined {
  if (cutAt <= SEGMENT_HEADER_BYTES) return undefined;
  return {
    name: seg.name,
    start: seg.start,
    bytes: cutAt - SEGMENT_HEADER_BYTES,
    end: seg.start + records - 1,
  };
}

export async function recoverLog(
  dir: string,
  opts: { repair: boolean; logger: StoreLogger | undefined; fs: DurableFs },
): Promise<RecoveredLog> {
  const { repair, logger, fs } = opts;
  const quarantine = new Quarantine(dir, undefined, fs);
  let droppedRecords = 0;
  let droppedSnapshot: RepairReport['droppedSnapshot'];

  /** Refuses (not repairing), or sets `segments[from..]` aside, `cutAt` bytes of the first kept. */
  const setAside = async (
    err: StoreCorruptionError,
    segments: readonly SegmentFile[],
    from: number,
    cutAt = 0,
  ): Promise<void> => {
    if (!repair) throw err;
    logger?.error?.(
      { file: err.file, offset: err.offset, reason: err.reason },
      'store damaged: --repair sets it aside',
    );
    for (let k = from; k < segments.length; k++) {
      const path = join(dir, segments[k]!.name);
      const buf = await fs.readFile(path);
      const skip = k === from ? Math.max(cutAt, SEGMENT_HEADER_BYTES) : SEGMENT_HEADER_BYTES;
      const counted = countRecords(buf.subarray(Math.min(skip, buf.length)));
      // a damaged stretch hides at least one record; an undecodable record counts as a valid one
      droppedRecords += counted.valid + counted.damaged;
      if (k === from && cutAt > SEGMENT_HEADER_BYTES) {
        await quarantine.copy(path);
        await fs.truncate(path, cutAt);
        await fs.syncFile(path);
      } else {
        await quarantine.move(path);
      }
    }
  };

  const state = new BrokerState();
  let snap: SnapshotContents | undefined;
  try {
    snap = await readSnapshotFile(dir, fs);
  } catch (err) {
    if (!(err instanceof StoreCorruptionError) || !repair) throw err;
    logger?.error?.(
      { file: err.file, offset: err.offset, reason: err.reason },
      'store damaged: --repair sets it aside',
    );
    droppedSnapshot = { index: await snapshotIndexHint(fs, err.file) };
    await quarantine.move(err.file);
  }
  let index = 0;
  if (snap) {
    state.restore(snap.state);
    index = snap.index;
  }
  const snapshotIndex = index;
  let segments = await listSegments(dir, fs);
  let recoveredEvents = 0;
  let truncatedBytes = 0;
  let segmentsDeleted = 0;
  /** The last segment still in place and where its records end (appends continue there if at `index`). */
  let kept: KeptSegment | undefined;

  if (droppedSnapshot && segments.length > 0 && segments[0]!.start > 1) {
    // Without the snapshot, records after it describe changes to a state we no longer have.
    await setAside(
      new StoreCorruptionError(join(dir, segments[0]!.name), 0, 'the log starts after the lost snapshot'),
      segments,
      0,
    );
    segments = [];
  }

  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    const last = next === undefined;
    const path = join(dir, seg.name);
    if (next && next.start <= snapshotIndex + 1) {
      // Wholly covered by the snapshot (a compaction crashed before deleting it).
      await fs.remove(path);
      segmentsDeleted++;
      continue;
    }
    if (seg.start > index + 1) {
      await setAside(
        new StoreCorruptionError(
          path,
          0,
          `a gap in the log: it starts at event ${seg.start}, expected <= ${index + 1}`,
        ),
        segments,
        i,
      );
      break;
    }
    const buf = await fs.readFile(path);
    const header = checkSegmentHeader(buf, seg.start);
    if (header.status === 'torn' && last) {
      // A crash while the segment was being created: it holds no record.
      logger?.warn?.(
        { file: path, offset: 0, bytesCut: buf.length },
        'store: removed a segment torn at creation',
      );
      await fs.remove(path);
      truncatedBytes += buf.length;
      continue;
    }
    if (header.status !== 'ok') {
      const reason =
        header.status === 'bad' ? header.reason : 'a torn segment header before the end of the log';
      await setAside(new StoreCorruptionError(path, 0, `bad segment header: ${reason}`), segments, i);
      break;
    }
    const body = buf.subarray(SEGMENT_HEADER_BYTES);
    const { payloads, validBytes } = scanRecords(body);
    let applied = 0;
    let undecodable: StoreCorruptionError | undefined;
    for (const payload of payloads) {
      const at = seg.start + applied;
      if (at > index) {
        try {
          state.apply(decodeEvent(payload));
        } catch (err) {
          const offset = payload.byteOffset - buf.byteOffset - RECORD_HEADER_BYTES;
          undecodable = new StoreCorruptionError(
            path,
            offset,
            `a record with a valid checksum that is not an event (${(err as Error).message})`,
          );
          break;
        }
        index = at;
        recoveredEvents++;
      }
      applied++;
    }
    if (undecodable) {
      await setAside(undecodable, segments, i, undecodable.offset);
      kept = keptSegment(seg, undecodable.offset, applied) ?? kept;
      break;
    }
    if (validBytes < body.length) {
      const offset = SEGMENT_HEADER_BYTES + validBytes;
      const damage = classifyTail(buf, offset);
      if (damage.kind === 'torn' && last) {
        const bytesCut = body.length - validBytes;
        logger?.warn?.(
          { file: path, offset, bytesCut, reason: damage.reason },
          'store: cut a torn tail (a crash mid-write)',
        );
        await fs.truncate(path, offset);
        await fs.syncFile(path);
        truncatedBytes += bytesCut;
      } else {
        const reason =
          damage.kind === 'torn'
            ? `${damage.reason}, but later segments follow: not the end of the log`
            : damage.reason;
        await setAside(new StoreCorruptionError(path, offset, reason), segments, i, offset);
        kept = keptSegment(seg, offset, applied) ?? kept;
        break;
      }
    }
    kept = { name: seg.name, start: seg.start, bytes: validBytes, end: seg.start + applied - 1 };
  }
  const appendTo =
    kept !== undefined && kept.end === index
      ? { name: kept.name, start: kept.start, bytes: kept.bytes }
      : undefined;
  await quarantine.sync();
  let report: RepairReport | undefined;
  if (quarantine.dir !== undefined) {
    report = { quarantineDir: quarantine.dir, files: quarantine.files, droppedRecords, keptIndex: index };
    if (droppedSnapshot) report.droppedSnapshot = droppedSnapshot;
    logger?.warn?.(
      { ...report },
      `store repaired: dropped ${droppedRecords} log record(s)${droppedSnapshot ? ' and the snapshot' : ''}; starting from event ${index}`,
    );
  }
  return {
    state,
    index,
    snapshotIndex,
    recoveredEvents,
    truncatedBytes,
    segmentsDeleted,
    appendTo,
    repair: report,
  };
}
