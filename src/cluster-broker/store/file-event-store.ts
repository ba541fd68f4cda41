/**
 * The event store's running side (event-store.ts opens it): commit applies and frames an event
 * into the group commit batch, one write+fsync per batch, then the rolls to a new segment and the
 * compaction (snapshot, older segments deleted) the log's growth calls for.
 */
import { join } from 'node:path';
import type { BrokerState } from '../core/broker-state.js';
import { writeEvent } from '../core/event-codec.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import { CompactionPace } from '../files/compaction-pace.js';
import { type DurableFile, nodeDurableFs } from '../files/durable-fs.js';
import { StoreError } from '../files/errors.js';
import { LatencyHistogram } from '../files/latency-histogram.js';
import { MAX_RECORD_BYTES } from '../files/record-bytes.js';
import { type Batch, MAX_BATCH_START_BYTES, MIN_BATCH_BYTES, newBatch } from './commit-batch.js';
import type { Committed, EventStore, StoreOptions, StoreStats } from './event-store-types.js';
import { RECORD_HEADER_BYTES, sealRecord } from './record-format.js';
import { assertRecordFits, recordBytesAtLeast } from './record-limit.js';
import { createSegment } from './segment-file.js';
import { listSegments, MAX_SEGMENT_BYTES } from './segments.js';
import { writeSnapshotFile } from './snapshot-file.js';

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

export class FileEventStore implements EventStore {
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
