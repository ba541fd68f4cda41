/**
 * The single-node durable store: an append-only event log with group-committed fsync, snapshots
 * and recovery, wrapped around a BrokerState.
 *
 * commit(event) applies the event to the state at once (so the state is always "every event
 * committed so far", in log order) and queues its record; `durable` resolves when the record is
 * written and fsynced. All commits made while a write+fsync is in flight share the next single
 * write and fsync (group commit).
 *
 * What waits for `durable` (the network layer's rule):
 * - settle a publisher's transfer (accepted / duplicate-accepted / refused) only after `durable`;
 * - confirm a consumer's accept (rcv-settle-mode second) only after `durable`;
 * - acquire, release, modified, expire, declare need not wait: after a crash every acquisition
 *   is void anyway (open() releases them all) and the rest is at-least-once.
 * Because the log order is the apply order, a durable record implies every earlier one is durable.
 *
 * Recovery (openStore, recovery.ts): load snapshot.bin (state as of index N), replay records
 * after N from the segments, cut a torn tail of the LAST segment (a crash mid-write; logged at
 * warn), refuse to open on any other damage (StoreCorruptionError; damage.ts tells the two apart)
 * or set it aside with `repair`, then release every acquisition left in the state (its
 * consumers died with the process).
 *
 * Segments: a new segment is started once the current one holds `maxSegmentBytes` (default
 * MAX_SEGMENT_BYTES, segments.ts), so a store of any size is a run of bounded files.
 *
 * Records: an event whose record would be past the format's limit is refused (RecordTooLargeError,
 * record-limit.ts) before it is applied or written; the store goes on.
 *
 * Compaction: when the log since the last snapshot passes `segmentBytes` and pays for a snapshot of the live
 * message bytes (see rollDue, file-event-store.ts), the state is snapshotted (sync, at the current index, as parts that reference
 * the stored message bytes rather than copy them), a new segment is started, the snapshot is
 * written atomically in the background, and only once it is durable are the older segments
 * deleted.
 *
 * This file opens a store (openStore); the open store's code is file-event-store.ts, its group
 * commit buffer commit-batch.ts, a new segment file segment-file.ts, and the options, counters and
 * EventStore interface event-store-types.ts.
 */
import { join } from 'node:path';
import { type DurableFile, nodeDurableFs } from '../files/durable-fs.js';
import type { EventStore, StoreOptions, StoreStats } from './event-store-types.js';
import { FileEventStore } from './file-event-store.js';
import { recoverLog } from './recovery.js';
import { createSegment } from './segment-file.js';
import { removeStaleTemp } from './snapshot-file.js';

export type { Committed, EventStore, StoreOptions, StoreStats } from './event-store-types.js';
export type { RepairReport, StoreLogger } from './recovery.js';

/**
 * Opens (creating if needed) the store in `dir` and recovers its state. Throws
 * StoreCorruptionError (nothing cut) on damage that is not a torn tail, unless `repair`.
 */
export async function openStore(dir: string, opts: StoreOptions = {}): Promise<EventStore> {
  const fs = opts.fs ?? nodeDurableFs;
  await fs.mkdir(dir);
  await removeStaleTemp(dir, fs);
  const log = await recoverLog(dir, { repair: opts.repair === true, logger: opts.logger, fs });
  const counters: StoreStats = {
    index: 0,
    durableIndex: 0,
    fsyncs: 0,
    writes: 0,
    bytesWritten: 0,
    snapshotsWritten: 0,
    segmentsDeleted: log.segmentsDeleted,
    recoveredEvents: log.recoveredEvents,
    recoveredSnapshotIndex: log.snapshotIndex,
    truncatedBytes: log.truncatedBytes,
    repairDroppedRecords: log.repair?.droppedRecords ?? 0,
  };
  let fh: DurableFile;
  let tail: { start: number; bytes: number };
  if (log.appendTo) {
    fh = await fs.openAppend(join(dir, log.appendTo.name));
    await fs.syncDir(dir);
    tail = { start: log.appendTo.start, bytes: log.appendTo.bytes };
  } else {
    // No segment, or the snapshot is ahead of the last one's records: continue in a new segment
    // whose first index is the next one, so record positions keep matching log indexes.
    fh = await createSegment(fs, dir, log.index + 1);
    tail = { start: log.index + 1, bytes: 0 };
  }
  const state = log.state;
  const store = new FileEventStore(
    dir,
    state,
    fh,
    {
      index: log.index,
      segmentStart: tail.start,
      segmentBytes: tail.bytes,
      logBytes: log.logBytes,
      counters,
    },
    opts,
  );
  if (state.listConsumers().length > 0) {
    // Every consumer died with the previous process: its acquisitions are void.
    store.commit({ type: 'release-all', leaderTime: (opts.clock ?? Date.now)() });
  }
  return store;
}
