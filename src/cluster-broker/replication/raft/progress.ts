/**
 * The leader's view of one follower (Raft's nextIndex/matchIndex plus flow control, after
 * etcd/raft): `probe` sends one append at a time until the follower's log position is found,
 * `replicate` pipelines appends (up to maxInflight), `snapshot` waits for an InstallSnapshot.
 */
export type ProgressMode = 'probe' | 'replicate' | 'snapshot';

export class Progress {
  match = 0;
  next: number;
  mode: ProgressMode = 'probe';
  /** probe: an append is outstanding; wait for its answer or the next heartbeat. */
  paused = false;
  /** replicate: last index of every append in flight, ascending. */
  inflight: number[] = [];
  /** Time of the last answer from this follower (check-quorum). */
  lastHeard: number;
  /** Time of the last append-response (replication is moving). */
  lastProgress: number;
  pendingSnapshot = 0;
  /** The follower said it is recovering (lost promises possible): its match does not count. */
  recovering = false;
  /** Our commit index when we learned it is recovering: it must hold at least that much. */
  recoveryTarget = 0;
  /**
   * The entry we appended when we learned it is recovering: once a majority without it has
   * committed that entry, we are no stale leader (recovery.ts, maybeEndRecovery).
   */
  recoveryProof = 0;
  /** We told it (in this term) that it has caught up; it may not have heard yet. */
  recoveryDeclared = false;
  /** The incarnation its last recovering answer came from: our news that it caught up names it. */
  recoveryRound: number | undefined;
  snapshotSentAt = Number.NEGATIVE_INFINITY;

  constructor(next: number, now: number) {
    this.next = next;
    this.lastHeard = now;
    this.lastProgress = now;
  }

  becomeProbe(next: number): void {
    this.mode = 'probe';
    this.next = Math.max(next, this.match + 1);
    this.paused = false;
    this.inflight = [];
  }

  becomeReplicate(): void {
    this.mode = 'replicate';
    this.next = Math.max(this.next, this.match + 1);
    this.paused = false;
    this.inflight = [];
  }

  becomeSnapshot(index: number, now: number): void {
    this.mode = 'snapshot';
    this.pendingSnapshot = index;
    this.snapshotSentAt = now;
    this.lastProgress = now;
    this.inflight = [];
  }

  /** The follower acknowledged up to `index`; returns true if match advanced. */
  acknowledge(index: number): boolean {
    let freed = 0;
    while (freed < this.inflight.length && this.inflight[freed]! <= index) freed++;
    if (freed > 0) this.inflight.splice(0, freed);
    if (index <= this.match) return false;
    this.match = index;
    if (this.next <= index) this.next = index + 1;
    return true;
  }
}
