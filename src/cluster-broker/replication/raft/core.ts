/**
 * RaftCore: the sans-I/O replication state machine of one member (Ongaro & Ousterhout, with
 * pre-vote, check-quorum and leader stickiness from the Raft thesis / etcd).
 *
 * Inputs: `tick(now)`, `step(message, now)`, `propose(data, now)`, `compact(index, data)`,
 * `peerDisconnected(peer, now)` (a hint from the transport; only timers depend on it).
 * Output: `takeReady()` -> Ready { persist, messages, restoreSnapshot, apply, softState }.
 * The driver persists (fsync), THEN sends, THEN applies, THEN calls `advance(ready)`. Every
 * message in a Ready may depend on the writes of that same Ready (a vote on the persisted vote,
 * an append-response on the persisted entries, a leader's append on its persisted term), which
 * is why nothing is sent before the fsync.
 *
 * The rules live in the layers RaftCore extends (README.md): state.ts, status.ts, recovery.ts,
 * leader-side.ts, follower-side.ts, elections.ts; this file holds the inputs and the Ready.
 */
import { RaftElections } from './elections.js';
import type { Entry, HardState, Message, Ready, Snapshot, SnapshotData } from './types.js';

export type { ProposalStatus } from './status.js';

export class RaftCore extends RaftElections {
  // ---- inputs ------------------------------------------------------------------------------

  tick(now: number): void {
    this.now = now;
    if (this.role === 'leader') {
      if (this.checkQuorum && !this.isQuorate(now)) {
        this.becomeFollower(this.term, null);
        return;
      }
      if (now >= this.heartbeatDue) {
        this.heartbeatDue = now + this.heartbeatInterval;
        for (const p of this.peers) this.sendHeartbeat(p);
      }
      return;
    }
    if (now < this.electionDeadline) return;
    // A damaged member may have voted in a term it no longer knows: it must not even vote for itself.
    if (this.recovering === 'damaged') this.resetElectionDeadline();
    else this.campaign();
  }

  /**
   * A leader about to keep its event loop busy (a log compaction walks the whole state) speaks
   * first: heartbeats to every follower now, so their election timers restart from here and a
   * whole election timeout covers the work (a fresh cluster's first compaction, under load, came
   * right before its only leader change: docs/cluster-member.md#fresh-start). Nothing else changes:
   * a heartbeat claims nothing the followers' logs do not already hold.
   */
  heartbeatNow(now: number): void {
    this.now = now;
    if (this.role !== 'leader') return;
    this.heartbeatDue = now + this.heartbeatInterval;
    for (const p of this.peers) this.sendHeartbeat(p);
  }

  /**
   * The member itself was not running for `ms` (event loop stall, SIGSTOP, overloaded host):
   * shift every timer by `ms`, as if time had stood still, so that our own stall is not taken
   * for the silence of the others (etcd gets the same from counting ticks, not wall time).
   * Only liveness timers move; safety never depends on them.
   */
  pause(ms: number): void {
    if (!(ms > 0)) return;
    this.electionDeadline += ms;
    // not heartbeatDue: the followers did not stall, a leader that did must speak at once (shifting
    // it on every late tick kept a busy leader silent until the followers elected another)
    this.lastLeaderContact += ms;
    for (const pr of this.progress.values()) {
      pr.lastHeard += ms;
      pr.lastProgress += ms;
      pr.snapshotSentAt += ms;
    }
  }

  /**
   * The transport saw the connection from `peer` close. If `peer` is our leader it is most likely
   * gone (kill -9 and a clean stop both close its sockets): forget its lease, so that we grant
   * pre-votes again, and campaign soon instead of after a whole election timeout. Only timers
   * and the lease (both liveness) change: pre-vote, terms and the up-to-date check decide as
   * ever. A leader that is still alive keeps its place as long as a majority still hears it (they
   * refuse the pre-vote); a wrong hint to a majority costs one election, as a timeout would.
   */
  peerDisconnected(peer: string, now: number): void {
    this.now = now;
    if (this.role !== 'follower' || peer !== this.leader) return;
    this.lastLeaderContact = Number.NEGATIVE_INFINITY;
    this.leaderLostAt = now;
    this.lostLeader = peer;
    this.campaignSoonAfterLeaderLost();
  }

  /**
   * Append `data` as a new entry (leader only: a driver asks `isLeader()` first and refuses a
   * proposal on a follower in its own terms). Resolve the returned index/term by watching `apply`.
   */
  propose(data: Uint8Array, now: number): { index: number; term: number } {
    this.now = now;
    if (this.role !== 'leader') throw new Error(`not the leader (leader: ${this.leader ?? 'unknown'})`);
    const index = this.log.lastIndex() + 1;
    this.log.append({ index, term: this.term, data });
    if (this.peers.length === 0) this.maybeCommit();
    return { index, term: this.term };
  }

  /**
   * The application took a snapshot of its state after applying `index`: drop the log prefix.
   * `index` must be <= the last index handed out in `apply`.
   */
  compact(index: number, data: SnapshotData): void {
    if (index > this.applied) throw new Error(`compact ${index} beyond applied ${this.applied}`);
    if (index <= this.log.snapshotIndex) return;
    const term = this.log.term(index)!;
    const snap: Snapshot = { index, term, data };
    this.log.compact(snap);
    this.snapshotToPersist = snap;
  }

  step(m: Message, now: number): void {
    this.now = now;
    if (m.to !== this.id || !this.members.includes(m.from) || m.from === this.id) return;
    if (this.countsStaleBlankClaims) {
      if ((m.type === 'vote' || m.type === 'vote-response') && m.blank) this.noteBlankPeer(m.from);
    } else if (
      m.type === 'vote-response' &&
      m.blank &&
      m.blankRound !== undefined &&
      m.blankRound === this.incarnation
    )
      this.noteBlankPeer(m.from);
    if (m.term > this.term) {
      if (m.type === 'vote') {
        if (!m.pre) {
          if (this.inLease()) return; // leader stickiness: a healthy leader exists, ignore
          this.becomeFollower(m.term, null);
        }
      } else if (m.type === 'vote-response' && m.pre && m.granted) {
        // a granted pre-vote carries the term we would campaign in; nothing to adopt
      } else {
        const leader = m.type === 'append' || m.type === 'snapshot' || m.type === 'heartbeat' ? m.from : null;
        this.becomeFollower(m.term, leader);
      }
    } else if (m.term < this.term) {
      if (m.type === 'append' || m.type === 'snapshot' || m.type === 'heartbeat') {
        // tell the stale leader about the newer term
        this.send(this.appendResponse(m.from, false, 0, 0, 0));
      } else if (m.type === 'vote') {
        this.send(this.voteResponse(m, false, this.term));
      }
      return;
    }
    switch (m.type) {
      case 'vote':
        this.handleVote(m);
        break;
      case 'vote-response':
        this.handleVoteResponse(m);
        break;
      case 'append':
        if (this.role !== 'follower') this.becomeFollower(this.term, m.from);
        this.handleAppend(m);
        break;
      case 'snapshot':
        if (this.role !== 'follower') this.becomeFollower(this.term, m.from);
        this.handleSnapshot(m);
        break;
      case 'heartbeat':
        if (this.role !== 'follower') this.becomeFollower(this.term, m.from);
        this.handleHeartbeat(m);
        break;
      case 'append-response':
        if (this.role === 'leader') this.handleAppendResponse(m);
        break;
      case 'heartbeat-response':
        if (this.role === 'leader') this.handleHeartbeatResponse(m.from);
        break;
    }
  }

  // ---- output ------------------------------------------------------------------------------

  hasReady(): boolean {
    if (
      this.outbox.length > 0 ||
      this.eagerOutbox.length > 0 ||
      this.hardStateDirty ||
      this.snapshotToPersist
    ) {
      return true;
    }
    if (this.log.handedOut < this.log.lastIndex() || this.commit > this.applied) return true;
    if (this.role === 'leader') {
      for (const p of this.peers) if (this.wantsAppend(this.progress.get(p)!)) return true;
    }
    const s = this.lastSoft;
    return s.role !== this.role || s.term !== this.term || s.leaderId !== this.leader;
  }

  /**
   * Messages the driver MAY send at once, even while a Ready is being persisted, because they
   * depend on nothing unpersisted: the leader's appends, snapshots and heartbeats (its term was
   * durable before it could win, and it counts its own log toward commit only once durable, as in
   * etcd/raft) and followers' heartbeat-responses (they claim nothing about the log or votes).
   * A driver that never calls this gets them in the next Ready's `messages` instead.
   */
  takeEagerMessages(): Message[] {
    if (this.role === 'leader') for (const p of this.peers) this.sendAppend(p);
    const out = this.eagerOutbox;
    this.eagerOutbox = [];
    return out;
  }

  takeReady(): Ready {
    if (this.role === 'leader') for (const p of this.peers) this.sendAppend(p);
    const entries = this.log.takeUnpersisted();
    const hardState: HardState | undefined = this.hardStateDirty
      ? { term: this.term, vote: this.vote, ...(this.recovering ? { recovering: this.recovering } : {}) }
      : undefined;
    this.hardStateDirty = false;
    const persist = {
      entries,
      ...(hardState ? { hardState } : {}),
      ...(this.snapshotToPersist ? { snapshot: this.snapshotToPersist } : {}),
      ...(this.truncateFromPending !== undefined ? { truncateFrom: this.truncateFromPending } : {}),
    };
    const truncatedFrom = this.truncateFromPending;
    this.snapshotToPersist = undefined;
    this.truncateFromPending = undefined;
    const restoreSnapshot = this.snapshotToRestore;
    this.snapshotToRestore = undefined;
    // Entries up to lastIndex are persisted by this Ready before anything is applied.
    const apply = this.commit > this.applied ? this.log.slice(this.applied + 1, this.commit) : [];
    if (apply.length > 0) this.applied = apply[apply.length - 1]!.index;
    const soft = this.softState();
    const s = this.lastSoft;
    const softChanged = s.role !== soft.role || s.term !== soft.term || s.leaderId !== soft.leaderId;
    this.lastSoft = soft;
    const messages = this.eagerOutbox.length > 0 ? [...this.eagerOutbox, ...this.outbox] : this.outbox;
    this.outbox = [];
    this.eagerOutbox = [];
    return {
      persist,
      messages,
      apply,
      ...(restoreSnapshot ? { restoreSnapshot } : {}),
      ...(softChanged ? { softState: soft } : {}),
      ...(truncatedFrom !== undefined ? { truncatedFrom } : {}),
    };
  }

  /** The driver persisted, sent and applied `ready`. */
  advance(ready: Ready): void {
    this.log.markDurable(ready.persist.entries);
    if (this.role === 'leader') this.maybeCommit();
  }
}

export type { Entry };
