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
 * message bytes (see rollDue), the state is snapshotted (sync, at the current index, as parts that reference
 * the stored message bytes rather than copy them), a new segment is started, the snapshot is
 * written atomically in the background, and only once it is durable are the older segments
 * deleted.
 */
import { join } from 'node:path';
import { VarintWriter } from '../core/binary.js';
import type { BrokerState } from '../core/broker-state.js';
import { writeEvent } from '../core/event-codec.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import { CompactionPace } from '../files/compaction-pace.js';
import { type DurableFile, type DurableFs, nodeDurableFs } from '../files/durable-fs.js';
import { StoreError } from '../files/errors.js';
import { LatencyHistogram } from '../files/latency-histogram.js';
import { MAX_RECORD_BYTES } from '../files/record-bytes.js';
import { RECORD_HEADER_BYTES, sealRecord } from './record-format.js';
import { assertRecordFits, recordBytesAtLeast } from './record-limit.js';
import { recoverLog, type StoreLogger } from './recovery.js';
import { segmentHeader } from './segment-header.js';
import { listSegments, MAX_SEGMENT_BYTES, segmentName } from './segments.js';
import { removeStaleTemp, writeSnapshotFile } from './snapshot-file.js';

export type { RepairReport, StoreLogger } from './recovery.js';

export interface StoreOptions {
  /**
   * Consider a compaction (snapshot, new segment, older segments deleted) once the log since the
   * last snapshot holds this many bytes. Default 64 MiB.
   */
  segmentBytes?: number;
  /** Start a new segment once the current one holds this many bytes. Default MAX_SEGMENT_BYTES (256 MiB). */
  maxSegmentBytes?: number;
  /** Leader time for the events the store itself proposes (the release-all on open). Default Date.now. */
  clock?: () => number;
  /** Where a cut torn tail (warn), damage and a repair (error/warn) are reported. */
  logger?: StoreLogger;
  /**
   * On damage that is not a torn tail, set the damaged files aside in `<dir>/quarantine/<time>/`
   * and open what is intact (the log up to the damage) instead of throwing StoreCorruptionError.
   */
  repair?: boolean;
  /** Called once when a write or fsync fails: the store is unusable from then on and the broker must stop. */
  onFailure?: (err: StoreError) => void;
  /** @internal Every file operation of the store goes through this. Default: node:fs/promises (tests inject a power-loss model). */
  fs?: DurableFs;
  /**
   * The largest record payload the store writes; an event past it is refused
   * (RecordTooLargeError). Default and at most MAX_RECORD_BYTES, the format's limit
   * (docs/production.md#record-limit); smaller only so a test can reach it with small messages.
   */
  maxRecordBytes?: number;
  /**
   * Asked before a compaction with the live message bytes (about the size of the snapshot, whose
   * parts keep every message's bytes alive until written, even those consumed meanwhile); while
   * it returns true, compaction waits and the log keeps growing in its segment. The broker holds
   * it while the memory alarm is on or the snapshot would take the broker past its memory limit.
   */
  holdCompaction?: (snapshotBytes: number) => boolean;
}

export interface Committed<R> {
  /** What applying the event did (it is already applied). */
  result: R;
  /** Resolves when the event's record is fsynced; rejects with StoreError if the disk failed. */
  durable: Promise<void>;
}

/** Counters of a broker's durable store since it was opened. */
export interface StoreStats {
  /** Log index of the last committed event (events since the beginning of the store). */
  index: number;
  /** Log index of the last event known durable. */
  durableIndex: number;
  /** fsync calls made (one covers every write before it: group commit). */
  fsyncs: number;
  /** Writes to the log. */
  writes: number;
  /** Bytes written to the log. */
  bytesWritten: number;
  /** Snapshots written (compaction). */
  snapshotsWritten: number;
  /** Log segments deleted after a snapshot covered them. */
  segmentsDeleted: number;
  /** Events replayed from the log on open (after the snapshot). */
  recoveredEvents: number;
  /** Index the snapshot loaded on open covered (0 = none). */
  recoveredSnapshotIndex: number;
  /** Bytes cut from a torn log tail on open. */
  truncatedBytes: number;
  /** Log records a repair on open dropped (0 without repair or damage). */
  repairDroppedRecords: number;
}

export interface EventStore {
  readonly state: BrokerState;
  readonly dir: string;
  commit<E extends BrokerEvent>(event: E): Committed<ResultOf<E>>;
  /** commit() and wait until durable. */
  commitDurable<E extends BrokerEvent>(event: E): Promise<ResultOf<E>>;
  /** Resolves when everything committed so far is durable. */
  flush(): Promise<void>;
  stats(): StoreStats;
  /** Durations of the log's fsyncs (monitoring). */
  readonly fsyncLatency: LatencyHistogram;
  /** Flushes, waits for a running compaction, closes files. Later commits throw. */
  close(): Promise<void>;
}

/**
 * The records of one group commit, framed back to back in one buffer as they are committed: each
 * event is encoded straight into it (no buffer per event, no copy at write time).
 */
interface Batch {
  writer: VarintWriter;
  records: number;
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newBatch(startBytes: number): Batch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers that do not wait (acquire, release) must not cause unhandled rejections.
  promise.catch(() => {});
  return { writer: new VarintWriter(startBytes), records: 0, promise, resolve, reject };
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
/**
 * A batch buffer's smallest first size. It starts at the previous batch's size (group commits under
 * a steady load are alike, often ~1 MiB) and doubles when records outgrow it...
 */
const MIN_BATCH_BYTES = 64 * 1024;
/** ...and at most this, so one burst does not make every later batch allocate its size. */
const MAX_BATCH_START_BYTES = 4 * 1024 * 1024;

class FileEventStore implements EventStore {
  private index: number;
  private writtenIndex: number;
  private segmentStart: number;
  /** Bytes in the current segment (after its header). */
  private segmentBytes: number;
  /** Bytes of log written since the last snapshot (over every segment since). */
  private logBytes: number;
  /** Remembers the peak of the live bytes since the last snapshot: a drain defers it (compaction-pace.ts). */
  private readonly pace = new CompactionPace();
  /** The largest record payload written (StoreOptions.maxRecordBytes within the format's limit). */
  private readonly maxRecordBytes: number;
  private pending: Batch | undefined;
  /** The first size of the next batch's buffer (the last one's size). */
  private nextBatchBytes = MIN_BATCH_BYTES;
  private lastBatch: Promise<void> = Promise.resolve();
  private flushing = false;
  private flushScheduled = false;
  private compaction: Promise<void> | undefined;
  private failure: StoreError | undefined;
  private closed = false;
  private readonly counters: StoreStats;
  readonly fsyncLatency = new LatencyHistogram();

  constructor(
    readonly dir: string,
    readonly state: BrokerState,
    private fh: DurableFile,
    tail: {
      index: number;
      segmentStart: number;
      segmentBytes: number;
      logBytes: number;
      counters: StoreStats;
    },
    private readonly opts: StoreOptions,
  ) {
    this.index = tail.index;
    this.writtenIndex = tail.index;
    this.segmentStart = tail.segmentStart;
    this.segmentBytes = tail.segmentBytes;
    this.maxRecordBytes = Math.min(opts.maxRecordBytes ?? MAX_RECORD_BYTES, MAX_RECORD_BYTES);
    this.logBytes = tail.logBytes;
    this.counters = tail.counters;
  }

  commit<E extends BrokerEvent>(event: E): Committed<ResultOf<E>> {
    if (this.failure) throw this.failure;
    if (this.closed) throw new StoreError('the event store is closed');
    // before any buffer of its size is asked for: its message bodies alone may be too many bytes
    assertRecordFits(recordBytesAtLeast(event), this.maxRecordBytes);
    if (this.pending === undefined) this.pending = newBatch(this.nextBatchBytes);
    const batch = this.pending;
    const w = batch.writer;
    const start = w.pos;
    let result: ResultOf<E>;
    try {
      w.ensure(RECORD_HEADER_BYTES);
      w.pos += RECORD_HEADER_BYTES;
      writeEvent(w, event);
      assertRecordFits(w.pos - start - RECORD_HEADER_BYTES, this.maxRecordBytes);
      result = this.state.apply(event);
    } catch (err) {
      w.pos = start; // an event that does not encode, fit or apply leaves no record
      throw err;
    }
    sealRecord(w.buf, start, w.pos - start - RECORD_HEADER_BYTES);
    this.index++;
    batch.records++;
    this.lastBatch = batch.promise;
    this.scheduleFlush();
    return { result, durable: batch.promise };
  }

  async commitDurable<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    const c = this.commit(event);
    await c.durable;
    return c.result;
  }

  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.lastBatch;
  }

  stats(): StoreStats {
    return { ...this.counters, index: this.index, durableIndex: this.writtenIndex };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.lastBatch;
    } catch {
      // the failure is already reported through durable promises and onFailure
    }
    while (this.flushing) await new Promise((r) => setImmediate(r));
    await this.compaction;
    try {
      await this.fh.close();
    } catch (err) {
      if (!this.failure) throw err; // after a failure the handle may already be unusable
    }
  }

  private scheduleFlush(): void {
    if (this.flushing || this.flushScheduled) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: every commit made while handling this I/O phase (e.g. all
    // transfers in one socket read) joins the batch.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.runFlush();
    });
  }

  private async runFlush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    let batch: Batch | undefined;
    try {
      while (this.pending) {
        batch = this.pending;
        this.pending = undefined;
        const buf = batch.writer.written();
        this.nextBatchBytes = Math.min(MAX_BATCH_START_BYTES, Math.max(MIN_BATCH_BYTES, buf.length));
        await this.fh.write(buf);
        await this.fsyncLatency.time(() => this.fh.datasync());
        this.counters.fsyncs++;
        this.counters.writes++;
        this.counters.bytesWritten += buf.length;
        this.segmentBytes += buf.length;
        this.logBytes += buf.length;
        this.writtenIndex += batch.records;
        batch.resolve();
        batch = undefined;
        // the size guard first: summing the live bytes walks every queue
        if (
          !this.compaction &&
          this.logBytes >= (this.opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES) &&
          this.rollDue()
        ) {
          await this.roll();
        } else if (this.segmentBytes >= (this.opts.maxSegmentBytes ?? MAX_SEGMENT_BYTES)) {
          await this.nextSegment();
        }
      }
    } catch (err) {
      this.fail(err, batch);
    } finally {
      this.flushing = false;
    }
  }

  private fail(err: unknown, inFlight: Batch | undefined): void {
    const failure =
      err instanceof StoreError ? err : new StoreError('event log write failed', { cause: err });
    this.failure = failure;
    inFlight?.reject(failure);
    this.pending?.reject(failure);
    this.pending = undefined;
    this.lastBatch = Promise.reject(failure);
    this.lastBatch.catch(() => {});
    this.opts.logger?.error?.({ dir: this.dir, err: failure.message }, 'event store failed');
    this.opts.onFailure?.(failure);
  }

  /**
   * Roll (snapshot + new segment) once the log since the last snapshot is past `segmentBytes`
   * AND pays for a snapshot of the live message bytes, not draining (compaction-pace.ts), unless
   * `holdCompaction` says to wait (asked first: the pace takes a true answer as a roll).
   */
  private rollDue(): boolean {
    const live = this.state.liveBytes();
    if (this.opts.holdCompaction?.(live) === true) return false;
    return this.pace.paysOff(this.logBytes, live);
  }

  /** New segment now; snapshot + deletion of older segments in the background. */
  private async roll(): Promise<void> {
    const snapIndex = this.index;
    // parts that reference the stored message bytes: no copy of the live state on the loop
    const snapState = this.state.snapshotParts();
    const newStart = this.writtenIndex + 1;
    const fs = this.opts.fs ?? nodeDurableFs;
    const older = (await listSegments(this.dir, fs)).filter((s) => s.start < newStart);
    await this.nextSegment();
    this.logBytes = 0;
    this.compaction = (async () => {
      await writeSnapshotFile(this.dir, { index: snapIndex, state: snapState }, fs);
      this.counters.snapshotsWritten++;
      for (const s of older) {
        await fs.remove(join(this.dir, s.name));
        this.counters.segmentsDeleted++;
      }
      await fs.syncDir(this.dir);
    })()
      .catch((err: unknown) => {
        // Not fatal: the older segments are still there, the next roll tries again.
        this.opts.logger?.warn?.({ dir: this.dir, err: String(err) }, 'store: snapshot/compaction failed');
      })
      .finally(() => {
        this.compaction = undefined;
      });
  }

  /** Closes the current segment and continues in a new one starting at the next index to write. */
  private async nextSegment(): Promise<void> {
    const newStart = this.writtenIndex + 1;
    await this.fh.close();
    this.fh = await createSegment(this.opts.fs ?? nodeDurableFs, this.dir, newStart);
    this.segmentStart = newStart;
    this.segmentBytes = 0;
  }

  /** @internal for tests */
  get currentSegmentStart(): number {
    return this.segmentStart;
  }
}

/** Creates a segment file holding just its header, durably (a roll or a fresh store; not the hot path). */
async function createSegment(fs: DurableFs, dir: string, start: number): Promise<DurableFile> {
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
