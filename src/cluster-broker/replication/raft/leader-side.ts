/**
 * RaftLeaderSide: log replication from the leader: appends, snapshots and heartbeats paced by
 * each follower's Progress, their answers, and the majority commit.
 */
import type { Progress } from './progress.js';
import { RaftRecovery } from './recovery.js';
import type { AppendResponseMessage, Entry } from './types.js';

export abstract class RaftLeaderSide extends RaftRecovery {
  protected wantsAppend(pr: Progress): boolean {
    if (pr.mode === 'snapshot') return false;
    if (pr.mode === 'probe') return !pr.paused;
    return pr.next <= this.log.lastIndex() && pr.inflight.length < this.maxInflight;
  }

  protected sendHeartbeat(to: string): void {
    const pr = this.progress.get(to)!;
    const commit = Math.min(pr.match, this.commit);
    this.eagerOutbox.push({ type: 'heartbeat', from: this.id, to, term: this.term, commit });
  }

  /**
   * A follower answered a heartbeat. Restart replication that may have stalled on lost messages:
   * a probe is re-sent; a snapshot or a pipeline with no answer for a while restarts as a probe.
   */
  protected handleHeartbeatResponse(from: string): void {
    const pr = this.progress.get(from);
    if (!pr) return;
    pr.lastHeard = this.now;
    const stalled = this.now - pr.lastProgress > this.electionMax * 2;
    if (pr.mode === 'probe') pr.paused = false;
    else if (stalled && (pr.mode === 'snapshot' || pr.inflight.length > 0)) pr.becomeProbe(pr.match + 1);
    if (pr.match < this.log.lastIndex() || pr.mode === 'probe') this.sendAppend(from);
    else if (pr.recovering && pr.mode === 'replicate') this.askRecoveringFollower(from, pr);
  }

  /**
   * An empty append to a recovering follower that holds our whole log: only a flagged append
   * response ends its recovery (maybeEndRecovery), and a heartbeat's answer carries no flag. Without
   * it a follower that acknowledged the proof before a majority committed it would wait for the
   * next client write (an idle cluster: forever).
   */
  protected askRecoveringFollower(to: string, pr: Progress): void {
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm !== undefined) this.pushAppend(to, prevIndex, prevTerm, []);
  }

  protected pushAppend(to: string, prevIndex: number, prevTerm: number, entries: readonly Entry[]): void {
    this.eagerOutbox.push({
      type: 'append',
      from: this.id,
      to,
      term: this.term,
      prevIndex,
      prevTerm,
      entries,
      commit: this.commit,
    });
  }

  /** Send the follower what it is missing (if its flow control allows). */
  protected sendAppend(to: string): void {
    const pr = this.progress.get(to)!;
    if (!this.wantsAppend(pr)) return;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm === undefined) {
      // compacted away: the follower needs the snapshot
      const snap = this.log.snapshot!;
      pr.becomeSnapshot(snap.index, this.now);
      this.eagerOutbox.push({ type: 'snapshot', from: this.id, to, term: this.term, snapshot: snap });
      return;
    }
    const entries = this.log.slice(pr.next, this.log.lastIndex(), this.maxBytesPerAppend);
    this.pushAppend(to, prevIndex, prevTerm, entries);
    if (pr.mode === 'replicate' && entries.length > 0) {
      const last = entries[entries.length - 1]!.index;
      pr.next = last + 1;
      pr.inflight.push(last);
    } else if (pr.mode === 'probe') {
      pr.paused = true;
    }
  }

  protected handleAppendResponse(m: AppendResponseMessage): void {
    const pr = this.progress.get(m.from);
    if (!pr) return;
    pr.lastHeard = this.now;
    pr.lastProgress = this.now;
    if (m.recovering) {
      const holds = m.success ? m.matchIndex : m.hintIndex;
      // another incarnation after we declared one caught up: it may have voted in between and lost
      // that vote with its store, so it needs a new proof as a loss would
      const restarted = pr.recoveryDeclared && m.recoveryRound !== pr.recoveryRound;
      pr.recoveryRound = m.recoveryRound;
      if (restarted && holds >= pr.match) {
        this.reopenRecovery(pr);
      } else if (holds < pr.match) {
        // it lost entries it had acknowledged (a damaged store, maybe again after we declared it
        // caught up): it must catch up to what we have committed by now
        this.reopenRecovery(pr);
        pr.match = Math.max(0, holds);
        // Only a rejection proves the loss; a lower success may be a delayed answer to an older
        // append. Lowering the match is conservative either way, but answering every such success
        // with a new probe lets reordered and duplicated answers multiply into a storm of appends.
        if (m.success) return;
        pr.becomeProbe(pr.match + 1);
        this.sendAppend(m.from);
        return;
      }
      if (!pr.recovering && !pr.recoveryDeclared) {
        pr.recovering = true;
        pr.recoveryTarget = this.commit;
        pr.recoveryProof = this.appendRecoveryProof();
      }
    } else if (pr.recovering) {
      // it finished recovering by itself (a blank member that found the cluster new)
      pr.recovering = false;
    }
    if (m.success) {
      const before = pr.match;
      const advanced = pr.acknowledge(m.matchIndex);
      if (pr.mode === 'probe' || (pr.mode === 'snapshot' && pr.match >= pr.pendingSnapshot))
        pr.becomeReplicate();
      else if (pr.mode === 'replicate' && pr.next <= pr.match) pr.next = pr.match + 1;
      // a follower that acknowledged entries already committed (by the others) learns it now
      if (advanced && !this.maybeCommit() && this.commit > before) this.sendHeartbeat(m.from);
      if (m.recovering) this.maybeEndRecovery(m.from, pr);
      this.sendAppend(m.from);
      return;
    }
    if (m.rejectedPrev <= pr.match) return; // stale
    if (pr.mode === 'probe' && m.rejectedPrev !== pr.next - 1) return; // answer to an older probe
    if (pr.mode === 'snapshot') return;
    pr.becomeProbe(Math.min(m.rejectedPrev, m.hintIndex + 1));
    this.sendAppend(m.from);
  }

  /** Advance the commit index if a quorum holds more; true when it moved (followers told). */
  protected maybeCommit(): boolean {
    const matches = [this.log.durable];
    // a recovering follower's acks do not count (it may have acknowledged to a stale leader, or
    // lost what it acknowledged before): it keeps the leader in office but commits nothing
    for (const pr of this.progress.values()) matches.push(pr.recovering ? 0 : pr.match);
    matches.sort((a, b) => b - a);
    const n = matches[this.quorum - 1]!;
    if (n <= this.commit) return false;
    if (this.unsafe.commitOldTermsByCount !== true && this.log.term(n) !== this.term) return false;
    this.commit = n;
    // Tell followers at once (as etcd's bcastAppend), not at the next heartbeat: a member that
    // forwarded a proposal answers its client only when it applies the entry itself.
    for (const p of this.peers) {
      if (this.wantsAppend(this.progress.get(p)!)) this.sendAppend(p);
      else this.sendHeartbeat(p);
    }
    return true;
  }
}
