/**
 * What the single-node durable store (event-store.ts) is opened with and offers: its options, the
 * answer to a commit, its counters and the EventStore interface. Apart from the store's code so
 * the broker and its tests can name them without it.
 */
import type { BrokerState } from '../core/broker-state.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import type { DurableFs } from '../files/durable-fs.js';
import type { StoreError } from '../files/errors.js';
import type { LatencyHistogram } from '../files/latency-histogram.js';
import type { StoreLogger } from './recovery.js';

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
