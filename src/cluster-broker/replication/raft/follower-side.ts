/**
 * RaftFollowerSide: a follower takes the leader's appends (log matching), heartbeats (commit, and
 * the news that its recovery has ended) and snapshots, and answers them.
 */
import { RaftLeaderSide } from './leader-side.js';
import type { AppendMessage, AppendResponseMessage, HeartbeatMessage, SnapshotMessage } from './types.js';

export abstract class RaftFollowerSide extends RaftLeaderSide {
  protected appendResponse(
    to: string,
    success: boolean,
    matchIndex: number,
    rejectedPrev: number,
    hintIndex: number,
  ): AppendResponseMessage {
    return {
      type: 'append-response',
      from: this.id,
      to,
      term: this.term,
      success,
      matchIndex,
      rejectedPrev,
      hintIndex,
      ...(this.recovering ? { recovering: true, recoveryRound: this.incarnation } : {}),
    };
  }

  protected handleAppend(m: AppendMessage): void {
    this.leader = m.from;
    this.lastLeaderContact = this.now;
    this.resetElectionDeadline();
    let prevIndex = m.prevIndex;
    let prevTerm = m.prevTerm;
    let entries = m.entries;
    const snapIndex = this.log.snapshotIndex;
    if (prevIndex < snapIndex) {
      // Entries up to our snapshot are committed, so they match the leader's: skip them.
      entries = entries.filter((e) => e.index > snapIndex);
      if (entries.length === 0) {
        this.send(this.appendResponse(m.from, true, snapIndex, 0, 0));
        return;
      }
      prevIndex = snapIndex;
      prevTerm = this.log.snapshotTerm;
      if (entries[0]!.index !== snapIndex + 1) return;
    }
    const myPrevTerm = this.log.term(prevIndex);
    if (myPrevTerm !== prevTerm) {
      let hint = Math.min(prevIndex - 1, this.log.lastIndex());
      if (myPrevTerm !== undefined) {
        // skip back over the whole conflicting term in one round trip
        while (hint > this.commit && hint > snapIndex && this.log.term(hint) === myPrevTerm) hint--;
      }
      this.send(this.appendResponse(m.from, false, 0, m.prevIndex, hint));
      return;
    }
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k]!;
      const t = this.log.term(e.index);
      if (t === e.term) continue;
      if (t !== undefined) {
        if (e.index <= this.commit) throw new Error(`${this.id}: conflict at committed index ${e.index}`);
        this.log.truncateFrom(e.index);
        this.truncateFromPending = Math.min(this.truncateFromPending ?? e.index, e.index);
      }
      for (let j = k; j < entries.length; j++) this.log.append(entries[j]!);
      break;
    }
    const lastNew = prevIndex + entries.length;
    const newCommit = Math.min(m.commit, lastNew);
    if (newCommit > this.commit) this.commit = newCommit;
    // (the old bootstrap rule also ended a blank member's recovery here, on a leader whose log
    // starts in its own term; but such a leader may be stale, in a term below a vote the member
    // forgot, so only the leader's own check, maybeEndRecovery, ends it now)
    if (
      this.unsafe.bootstrapOnBlankMajority &&
      this.recovering === 'blank' &&
      m.prevIndex === 0 &&
      m.entries[0]?.term === m.term
    )
      this.finishRecovery();
    this.send(this.appendResponse(m.from, true, lastNew, 0, 0));
  }

  protected handleHeartbeat(m: HeartbeatMessage): void {
    this.leader = m.from;
    this.lastLeaderContact = this.now;
    this.resetElectionDeadline();
    // m.commit <= our acknowledged match, so we hold those entries and they match the leader's;
    // not after damage: what recovery kept may differ from what we acknowledged (a lost truncate
    // record brings back entries we had replaced), so until we have recovered only appends, whose
    // entries are checked against the leader's log, move our commit
    if (this.recovering !== 'damaged') {
      const c = Math.min(m.commit, this.log.lastIndex());
      if (c > this.commit) this.commit = c;
    }
    // news meant for an earlier incarnation (sent before we lost our store again, delivered late)
    // must not end this recovery: it was decided on acknowledgements that store has lost
    // (simulation seed 304,200)
    if (
      m.recovered &&
      this.recovering &&
      (m.recoveryRound === this.incarnation || this.unsafe.acceptStaleRecoveredNews)
    ) {
      // the leader that caught us up holds this term's vote as far as we know: granting another
      // candidate of this term after a restart could make a second leader of it
      if (this.vote === null) this.vote = m.from;
      this.finishRecovery();
    }
    this.eagerOutbox.push({ type: 'heartbeat-response', from: this.id, to: m.from, term: this.term });
  }

  protected handleSnapshot(m: SnapshotMessage): void {
    this.leader = m.from;
    this.lastLeaderContact = this.now;
    this.resetElectionDeadline();
    const snap = m.snapshot;
    if (snap.index <= this.commit) {
      this.send(this.appendResponse(m.from, true, this.commit, 0, 0));
      return;
    }
    const discarded = this.log.install(snap);
    if (discarded) this.truncateFromPending = snap.index + 1;
    this.snapshotToPersist = snap;
    this.snapshotToRestore = snap;
    this.commit = snap.index;
    this.applied = snap.index;
    this.send(this.appendResponse(m.from, true, snap.index, 0, 0));
  }
}
