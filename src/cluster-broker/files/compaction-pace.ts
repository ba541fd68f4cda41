/**
 * When a snapshot is worth taking: one policy for the single node's store and a cluster
 * member's Raft log.
 *
 * A snapshot costs O(live state) (walked on the event loop, then written); the log it replaces
 * grows with the traffic. Snapshotting only once the log since the last snapshot holds at least
 * LOG_BYTES_PER_LIVE_BYTE times the live message bytes keeps compaction linear in the traffic.
 * Snapshotting on a fixed amount of log instead is quadratic in a queue that only grows: each
 * snapshot re-serializes everything held, and a deep queue stalls the loop for seconds.
 *
 * A draining queue is the exception (CompactionPace): there the payoff is reached half way
 * through the drain (the log holds the enqueues, the live bytes fall), and the snapshot would
 * hold messages about to be deleted.
 */
export const LOG_BYTES_PER_LIVE_BYTE = 2;

/** True when `logBytes` of log since the last snapshot pay for a snapshot of `liveBytes`. */
export function snapshotPaysOff(logBytes: number, liveBytes: number): boolean {
  return logBytes >= LOG_BYTES_PER_LIVE_BYTE * liveBytes;
}

/** The log since the last snapshot and the live bytes, as seen at one compaction check. */
export interface PaceObservation {
  readonly logBytes: number;
  readonly liveBytes: number;
}

/**
 * True when the state drained since `peak` (the check that saw the most live bytes since the
 * last snapshot): its live bytes fell by more than the log grew since. Waiting then costs less
 * log than it takes off the snapshot. Measured from the peak, not from the previous check: a
 * drain's entries alternate (an acquire changes no live bytes, a settle removes them), so two
 * checks close together can see the log grow and nothing fall. A log that shrank was compacted
 * in between (or replaced by a snapshot from the leader): `peak` says nothing of this log.
 */
export function draining(peak: PaceObservation | undefined, now: PaceObservation): boolean {
  if (peak === undefined || now.logBytes < peak.logBytes) return false;
  return peak.liveBytes - now.liveBytes > now.logBytes - peak.logBytes;
}

/**
 * snapshotPaysOff, deferred while the state drains (draining). A drain of 1 KiB messages adds a
 * few dozen bytes of log per message and takes 1 KiB off the live state: the payoff alone would
 * snapshot half the queue, only for it to be deleted next. The deferral ends once the log grown
 * since the peak reaches what the live bytes fell since (at the latest, when the queues are
 * empty, the small-state rule applies), so it holds at most the peak's live bytes more log, and
 * compaction stays linear in the traffic. A fill (the peak is now) or a constant depth (nothing
 * falls while the log grows) is never deferred. It remembers the peak and the last check's log:
 * one per store or member, asked once per check; a true answer means the caller compacts.
 */
export class CompactionPace {
  private peak: PaceObservation | undefined;
  private lastLogBytes: number | undefined;

  /**
   * True when no log was added since the last check (a member checks on every advance, most of
   * them heartbeats): the state is as it was, so is the answer (false, else the caller compacted).
   * Asked before the live bytes, which walk every queue.
   */
  unchanged(logBytes: number): boolean {
    return this.lastLogBytes === logBytes;
  }

  paysOff(logBytes: number, liveBytes: number): boolean {
    if (this.unchanged(logBytes)) return false;
    this.lastLogBytes = logBytes;
    const now = { logBytes, liveBytes };
    const peak = this.peak;
    if (peak === undefined || logBytes < peak.logBytes || liveBytes >= peak.liveBytes) this.peak = now;
    if (!snapshotPaysOff(logBytes, liveBytes)) return false;
    // a drained state's snapshot costs next to nothing: waiting for more log gains nothing
    if (liveBytes > SMALL_STATE_BYTES && draining(this.peak, now)) return false;
    this.compacted();
    return true;
  }

  /** The caller compacts: the next check sees a new log. */
  compacted(): void {
    this.peak = undefined;
    this.lastLogBytes = undefined;
  }
}

/** A state this small is snapshotted on the entry count alone: its snapshot costs next to nothing. */
export const SMALL_STATE_BYTES = 1024 * 1024;

/** Default bound on a cluster member's log since its last snapshot (held in memory for followers). */
export const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** What a cluster member knows when deciding whether to compact its Raft log. */
export interface RaftLogPace {
  /** Entries applied since the last snapshot. */
  readonly entriesSince: number;
  /** The entry count that makes a compaction due (`snapshotEvery`; 0 never). */
  readonly every: number;
  /** Bytes of the entries applied since the last snapshot. */
  readonly logBytes: number;
  /**
   * Live message bytes of the state, when the state machine can tell (else the count alone
   * decides). Asked only once the entry count is reached: it walks every queue.
   */
  readonly liveBytes: (() => number) | undefined;
  /** Compact at this much log whatever the state: bounds the memory and the replay after a restart. */
  readonly maxLogBytes: number;
}

/**
 * A cluster member compacts after `every` entries, but a large state only once the log pays
 * for it (`pace`, the member's own: as the single node's store, deferred while the state drains)
 * or has reached `maxLogBytes`; a small state (SMALL_STATE_BYTES) on the count alone. A log at `maxLogBytes` is
 * compacted before `every` entries too: the member's log is one file, rewritten at each
 * compaction, and this bounds it (10,000 entries of 1 MiB would be 10 GiB;
 * docs/production.md#store-size).
 */
export function raftCompactionDue(p: RaftLogPace, pace: CompactionPace): boolean {
  const due = raftCompactionDueNow(p, pace);
  if (due) pace.compacted();
  return due;
}

function raftCompactionDueNow(p: RaftLogPace, pace: CompactionPace): boolean {
  if (p.every <= 0) return false;
  if (p.logBytes >= p.maxLogBytes) return true;
  if (p.entriesSince < p.every) return false;
  if (p.liveBytes === undefined) return true;
  if (pace.unchanged(p.logBytes)) return false;
  const live = p.liveBytes();
  if (live <= SMALL_STATE_BYTES) return true;
  return pace.paysOff(p.logBytes, live);
}
