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
import { type ChunkedReader, withChunkedReader } from '../files/chunked-reader.js';
import type { DurableFs } from '../files/durable-fs.js';
import { classifyTail, countRecords, type TailDamage } from './damage.js';
import { StoreCorruptionError } from './errors.js';
import { Quarantine } from './quarantine.js';
import { scanRecordStream } from './record-format.js';
import { checkSegmentHeader, SEGMENT_HEADER_BYTES } from './segment-header.js';
import { listSegments, type SegmentFile } from './segments.js';
import { readSnapshotFile, type SnapshotContents, snapshotIndexHint } from './snapshot-file.js';

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
  /** Record bytes of the segments kept (the log since the snapshot, about: what compaction weighs). */
  logBytes: number;
  /** The last segment, when appends continue in it (its records end exactly at `index`). */
  appendTo: { name: string; start: number; bytes: number } | undefined;
  repair: RepairReport | undefined;
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

/** What reading one segment found (nothing on disk changed yet). */
type SegmentScan =
  | { kind: 'torn-at-creation'; size: number }
  | { kind: 'bad-header'; reason: string }
  | { kind: 'torn-header' }
  | {
      kind: 'records';
      size: number;
      /** Valid records read (applied or already covered by the snapshot). */
      applied: number;
      /** Events applied from it. */
      recovered: number;
      /** The log index after them. */
      index: number;
      /** Byte offset where the valid records end. */
      validEnd: number;
      /** A record with a valid checksum that is not an event (replay stopped before it). */
      undecodable: StoreCorruptionError | undefined;
      /** What follows `validEnd` when it is not the end of the file. */
      damage: TailDamage | undefined;
    };

/**
 * Reads one segment a chunk at a time (any size), applying its records after `index` to
 * `state`, and classifies what stops the scan before the end (damage.ts).
 */
async function scanSegment(
  reader: ChunkedReader,
  seg: SegmentFile,
  index: number,
  state: BrokerState,
  path: string,
): Promise<SegmentScan> {
  const header = checkSegmentHeader(await reader.bytes(0, SEGMENT_HEADER_BYTES), seg.start);
  if (header.status === 'torn') return { kind: 'torn-at-creation', size: reader.size };
  if (header.status === 'bad') return { kind: 'bad-header', reason: header.reason };
  let applied = 0;
  let recovered = 0;
  let undecodable: StoreCorruptionError | undefined;
  const validEnd = await scanRecordStream(reader, SEGMENT_HEADER_BYTES, (payload, offset) => {
    const at = seg.start + applied;
    if (at > index) {
      try {
        // views of the record: apply copies what the state keeps before the next read
        state.apply(decodeEvent(payload, 'view'));
      } catch (err) {
        undecodable = new StoreCorruptionError(
          path,
          offset,
          `a record with a valid checksum that is not an event (${(err as Error).message})`,
        );
        return false;
      }
      index = at;
      recovered++;
    }
    applied++;
    return true;
  });
  const damage =
    undecodable === undefined && validEnd < reader.size ? await classifyTail(reader, validEnd) : undefined;
  return {
    kind: 'records',
    size: reader.size,
    applied,
    recovered,
    index,
    validEnd,
    undecodable,
    damage,
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
      const skip = k === from ? Math.max(cutAt, SEGMENT_HEADER_BYTES) : SEGMENT_HEADER_BYTES;
      const counted = await withChunkedReader(fs, path, (reader) => countRecords(reader, skip));
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
  let logBytes = 0;
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
    const scan = await withChunkedReader(fs, path, (reader) => scanSegment(reader, seg, index, state, path));
    if (scan.kind === 'torn-at-creation' && last) {
      // A crash while the segment was being created: it holds no record.
      logger?.warn?.(
        { file: path, offset: 0, bytesCut: scan.size },
        'store: removed a segment torn at creation',
      );
      await fs.remove(path);
      truncatedBytes += scan.size;
      continue;
    }
    if (scan.kind !== 'records') {
      const reason =
        scan.kind === 'bad-header' ? scan.reason : 'a torn segment header before the end of the log';
      await setAside(new StoreCorruptionError(path, 0, `bad segment header: ${reason}`), segments, i);
      break;
    }
    const { applied, validEnd, size, undecodable, damage } = scan;
    index = scan.index;
    recoveredEvents += scan.recovered;
    if (undecodable) {
      await setAside(undecodable, segments, i, undecodable.offset);
      kept = keptSegment(seg, undecodable.offset, applied) ?? kept;
      break;
    }
    const validBytes = validEnd - SEGMENT_HEADER_BYTES;
    logBytes += validBytes;
    if (damage !== undefined) {
      const offset = validEnd;
      if (damage.kind === 'torn' && last) {
        const bytesCut = size - validEnd;
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
    logBytes,
    appendTo,
    repair: report,
  };
}
