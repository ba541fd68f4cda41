/**
 * When a snapshot is worth taking: one policy for the single node's store and a cluster
 * member's Raft log.
 *
 * A snapshot costs O(live state) (walked on the event loop, then written); the log it replaces
 * grows with the traffic. Snapshotting only once the log since the last snapshot holds at least
 * LOG_BYTES_PER_LIVE_BYTE times the live message bytes keeps compaction linear in the traffic.
 * Snapshotting on a fixed amount of log instead is quadratic in a queue that only grows: each
 * snapshot re-serializes everything held, and a deep queue stalls the loop for seconds.
 */
export const LOG_BYTES_PER_LIVE_BYTE = 2;

/** True when `logBytes` of log since the last snapshot pay for a snapshot of `liveBytes`. */
export function snapshotPaysOff(logBytes: number, liveBytes: number): boolean {
  return logBytes >= LOG_BYTES_PER_LIVE_BYTE * liveBytes;
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
 * for it (as the single node's store) or has reached `maxLogBytes`. A log at `maxLogBytes` is
 * compacted before `every` entries too: the member's log is one file, rewritten at each
 * compaction, and this bounds it (10,000 entries of 1 MiB would be 10 GiB;
 * docs/production.md#store-size).
 */
export function raftCompactionDue(p: RaftLogPace): boolean {
  if (p.every <= 0) return false;
  if (p.logBytes >= p.maxLogBytes) return true;
  if (p.entriesSince < p.every) return false;
  if (p.liveBytes === undefined) return true;
  const live = p.liveBytes();
  if (live <= SMALL_STATE_BYTES) return true;
  return p.logBytes >= p.maxLogBytes || snapshotPaysOff(p.logBytes, live);
}
