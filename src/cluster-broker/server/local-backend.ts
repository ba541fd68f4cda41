/**
 * The single-node backend: broker events go to this node's event store (or to memory only).
 *
 * Durability rule (see store/event-store.ts): enqueue and settle resolve once fsynced (a
 * publisher's `accepted` and a consumer's confirmed accept are promises about the disk); the rest
 * (declare, acquire, release, expire) resolve at once: after a crash every acquisition is void
 * anyway and the store's recovery releases them all.
 */
import { EventEmitter } from 'eventemitter3';
import { sharedInterval } from '../../common/shared-interval.js';
import { forEachAvailableQueue, queuesHeldBy } from '../core/availability.js';
import { BrokerState } from '../core/broker-state.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import { RecordTooLargeError } from '../files/errors.js';
import type { LatencyHistogram } from '../files/latency-histogram.js';
import { type EventStore, openStore, type StoreOptions, type StoreStats } from '../store/index.js';
import {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  OutcomeUnknownError,
} from './backend.js';

/** The part of EventStore the backend needs (an in-memory stand-in implements it too). */
export interface EventCommitter {
  readonly state: BrokerState;
  commit<E extends BrokerEvent>(event: E): { result: ResultOf<E>; durable: Promise<void> };
  flush(): Promise<void>;
  close(): Promise<void>;
  stats?(): StoreStats;
  /** Durations of the store's fsyncs (absent in memory). */
  readonly fsyncLatency?: LatencyHistogram;
}

export interface LocalBackendOptions {
  /** Clock for leaderTime. Default Date.now. */
  clock?: () => number;
  /** How often (ms) to check for expired messages and aged dedup entries. Default 1000. */
  expireIntervalMs?: number;
}

const RESOLVED = Promise.resolve();

/** An in-memory committer: nothing survives the process (tests, fuzzing, `--data-dir` absent). */
export function memoryCommitter(): EventCommitter {
  const state = new BrokerState();
  let index = 0;
  return {
    state,
    commit(event) {
      index++;
      return { result: state.apply(event), durable: RESOLVED };
    },
    flush: () => RESOLVED,
    close: () => RESOLVED,
    stats: () => ({
      index,
      durableIndex: index,
      fsyncs: 0,
      writes: 0,
      bytesWritten: 0,
      snapshotsWritten: 0,
      segmentsDeleted: 0,
      recoveredEvents: 0,
      recoveredSnapshotIndex: 0,
      truncatedBytes: 0,
      repairDroppedRecords: 0,
    }),
  };
}

/** A single-node backend: events committed to a local store (or memory). */
export class LocalBackend extends EventEmitter<BrokerBackendEvents> implements BrokerBackend {
  readonly serving = true;
  readonly notServingReason = undefined;
  private readonly clock: () => number;
  private closed = false;
  private failed: Error | undefined;
  private readonly stopTimer: () => void;
  private lastHousekeeping = 0;
  /** One function for every submit's available queues, not a closure each. */
  private readonly emitAvailable = (queue: string): void => {
    this.emit('available', queue);
  };

  constructor(
    private readonly committer: EventCommitter,
    opts: LocalBackendOptions = {},
  ) {
    super();
    this.clock = opts.clock ?? Date.now;
    this.stopTimer = sharedInterval(opts.expireIntervalMs ?? 1000, () => this.housekeeping(), { ref: false });
  }

  get state(): BrokerState {
    return this.committer.state;
  }

  now(): number {
    return this.clock();
  }

  submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    if (this.closed || this.failed) {
      return Promise.reject(
        new BackendClosedError(this.failed ? 'the event store failed' : 'the broker is stopping'),
      );
    }
    const held = queuesHeldBy(this.committer.state, event);
    let committed: { result: ResultOf<E>; durable: Promise<void> };
    try {
      committed = this.committer.commit(event);
    } catch (err) {
      // one event too large for a record: refused before anything was applied or written, the
      // store goes on (only its publisher is told)
      if (err instanceof RecordTooLargeError) return Promise.reject(err);
      // commit throws before applying (store failed/closed): the event surely did not commit
      this.failed = err instanceof Error ? err : new Error(String(err));
      return Promise.reject(new BackendClosedError('the event store refused the event', { cause: err }));
    }
    const { result, durable } = committed;
    forEachAvailableQueue(event, result, held, this.committer.state, this.emitAvailable);
    if (event.type !== 'enqueue' && event.type !== 'settle' && event.type !== 'commit')
      return Promise.resolve(result);
    return durable.then(
      () => result,
      (err: unknown) => {
        this.failed = err instanceof Error ? err : new Error(String(err));
        // applied in memory, maybe on disk: nobody can say
        throw new OutcomeUnknownError('the event store failed to make the event durable', { cause: err });
      },
    );
  }

  stats(): StoreStats | undefined {
    return this.committer.stats?.();
  }

  /** Durations of the store's fsyncs; undefined in memory. */
  get fsyncLatency(): LatencyHistogram | undefined {
    return this.committer.fsyncLatency;
  }

  /** Stops housekeeping, waits for everything committed to be durable, closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTimer();
    try {
      await this.committer.flush();
    } finally {
      await this.committer.close();
    }
  }

  /** Drops expired messages and forgets aged dedup entries (only when there is something to do). */
  private housekeeping(): void {
    if (this.closed || this.failed) return;
    const now = this.clock();
    const top = this.committer.state.expiry.peek();
    const due = top !== undefined && top.expiresAt <= now;
    const dedupDue = now - this.lastHousekeeping >= 30_000 && this.committer.state.queues.size > 0;
    if (!due && !dedupDue) return;
    this.lastHousekeeping = now;
    this.submit({ type: 'expire', leaderTime: now }).catch(() => {});
  }
}

/** A single-node backend over the durable event store in `dataDir`. */
export async function openLocalBackend(
  dataDir: string,
  opts: LocalBackendOptions & { store?: StoreOptions } = {},
): Promise<LocalBackend> {
  const store: EventStore = await openStore(dataDir, opts.store ?? {});
  return new LocalBackend(store, opts);
}

/** A single-node backend that keeps everything in memory. */
export function memoryBackend(opts: LocalBackendOptions = {}): LocalBackend {
  return new LocalBackend(memoryCommitter(), opts);
}
