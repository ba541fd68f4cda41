/**
 * RaftElections: roles and how they change: pre-vote, vote, campaign, leader stickiness (the
 * lease), the early campaign after the transport reports the leader gone, become*.
 */
import { RaftFollowerSide } from './follower-side.js';
import { Progress } from './progress.js';
import type { VoteMessage, VoteResponseMessage } from './types.js';

export abstract class RaftElections extends RaftFollowerSide {
  /**
   * Within an election timeout of the hint, a pre-vote is retried as soon as the first one went
   * out: one refused by a peer that had not yet seen the connection close (its lease still held)
   * or by a peer with a longer log would otherwise cost a whole timeout. Pre-votes change no term,
   * so a late grant still counts in the next round. A real campaign keeps its full timeout: a
   * retry shorter than a round trip on a loaded host would only ever raise the term.
   */
  protected campaignSoonAfterLeaderLost(): void {
    if (!this.leaderRecentlyLost()) return;
    const delay =
      this.leaderLostDelay + (this.survivorRank(this.id) + this.random() / 2) * this.leaderLostStagger;
    this.electionDeadline = Math.min(this.electionDeadline, this.now + delay);
  }

  protected leaderRecentlyLost(): boolean {
    return this.now - this.leaderLostAt < this.electionMax;
  }

  /** Position of `id` among the members but the lost leader: who campaigns first after the hint. */
  protected survivorRank(id: string): number {
    return Math.max(0, this.members.filter((m) => m !== this.lostLeader).indexOf(id));
  }

  protected inLease(): boolean {
    if (!this.checkQuorum) return false;
    if (this.role === 'leader') return this.isQuorate(this.now);
    return this.leader !== null && this.now - this.lastLeaderContact < this.electionMin;
  }

  protected becomeFollower(term: number, leader: string | null): void {
    if (term > this.term) {
      this.term = term;
      this.vote = null;
      this.hardStateDirty = true;
    }
    this.role = 'follower';
    this.leader = leader;
    this.votes.clear();
    this.progress.clear();
    if (leader !== null) this.lastLeaderContact = this.now;
    this.resetElectionDeadline();
  }

  protected campaign(): void {
    if (this.preVote) this.becomePreCandidate();
    else this.becomeCandidate();
  }

  protected becomePreCandidate(): void {
    this.role = 'pre-candidate';
    this.leader = null;
    this.votes = new Map([[this.id, true]]);
    this.resetElectionDeadline();
    this.campaignSoonAfterLeaderLost();
    if (this.quorum <= 1) {
      this.becomeCandidate();
      return;
    }
    for (const p of this.peers) this.send(this.voteRequest(p, true));
  }

  protected becomeCandidate(): void {
    this.role = 'candidate';
    this.term += 1;
    this.vote = this.id;
    this.hardStateDirty = true;
    this.leader = null;
    this.votes = new Map([[this.id, true]]);
    this.resetElectionDeadline();
    if (this.quorum <= 1) {
      this.becomeLeader();
      return;
    }
    for (const p of this.peers) this.send(this.voteRequest(p, false));
  }

  protected becomeLeader(): void {
    // a recovering member never stands (handleVoteResponse); a blank one of a single-member
    // cluster is the whole cluster, and the unsafe old bootstrap rule lets a blank one win
    if (this.recovering) this.finishRecovery();
    this.role = 'leader';
    this.leader = this.id;
    this.votes.clear();
    this.progress = new Map(this.peers.map((p) => [p, new Progress(this.log.lastIndex() + 1, this.now)]));
    // A no-op of the new term: committing it commits every earlier entry (Raft 5.4.2).
    this.log.append({ index: this.log.lastIndex() + 1, term: this.term, data: null });
    this.heartbeatDue = this.now + this.heartbeatInterval;
    for (const p of this.peers) this.sendAppend(p);
    if (this.peers.length === 0) this.maybeCommit();
  }

  protected voteRequest(to: string, pre: boolean): VoteMessage {
    return {
      type: 'vote',
      from: this.id,
      to,
      term: pre ? this.term + 1 : this.term,
      pre,
      lastIndex: this.log.lastIndex(),
      lastTerm: this.log.lastTerm(),
      ...(this.holdsNothing() ? { blank: true } : {}),
      ...(this.recovering === 'blank' ? { blankRound: this.incarnation } : {}),
    };
  }

  /**
   * Our answer to `req`. A blank requester's round comes back with our own blank claim only when
   * we hold nothing now: a claim answers one round, so a late or duplicated message from when we
   * (or it) held nothing cannot count later (noteBlankPeer).
   */
  protected voteResponse(req: VoteMessage, granted: boolean, term: number): VoteResponseMessage {
    const blank = this.holdsNothing();
    return {
      type: 'vote-response',
      from: this.id,
      to: req.from,
      term,
      pre: req.pre,
      granted,
      ...(blank ? { blank: true } : {}),
      ...(blank && req.blankRound !== undefined ? { blankRound: req.blankRound } : {}),
    };
  }

  protected handleVote(m: VoteMessage): void {
    if (this.recovering && !this.blankVotesForEmptyLog(m)) {
      // it may have promised this vote, or acknowledged entries the candidate lacks, and lost the
      // record; a blank member too: an emptied data dir looks exactly like a new one
      this.send(this.voteResponse(m, false, this.term));
      return;
    }
    const canVote =
      this.vote === m.from || (this.vote === null && this.leader === null) || (m.pre && m.term > this.term);
    const leaseBlocks = m.pre && this.inLease();
    const upToDate = this.unsafe.skipUpToDateCheck === true || this.log.isUpToDate(m.lastIndex, m.lastTerm);
    if (canVote && upToDate && !leaseBlocks) {
      if (!m.pre) {
        this.vote = m.from;
        this.hardStateDirty = true;
        this.resetElectionDeadline();
      }
      this.send(this.voteResponse(m, true, m.term));
      // Two survivors pre-campaigning at once grant each other and both stand, splitting the
      // vote (a whole timeout lost, seen on a loaded host where a round trip outlasts the
      // stagger): after the hint, the one that ranks later gives way to the one it just granted.
      if (
        m.pre &&
        this.role === 'pre-candidate' &&
        this.leaderRecentlyLost() &&
        this.survivorRank(m.from) < this.survivorRank(this.id)
      )
        this.becomeFollower(this.term, null);
    } else {
      this.send(this.voteResponse(m, false, this.term));
    }
  }

  protected handleVoteResponse(m: VoteResponseMessage): void {
    if (m.pre) {
      if (this.role !== 'pre-candidate') return;
      if (m.term !== (m.granted ? this.term + 1 : this.term)) return; // from an older round
    } else if (this.role !== 'candidate' || m.term !== this.term) {
      return;
    }
    this.votes.set(m.from, m.granted);
    let yes = 0;
    let no = 0;
    for (const g of this.votes.values()) g ? yes++ : no++;
    if (yes >= this.quorum) {
      // a recovering member never stands: it cannot prove it did not vote for another in that term
      // (a blank one pre-campaigns only to tell the others it is blank)
      if (this.recovering && !this.unsafe.bootstrapOnBlankMajority) this.becomeFollower(this.term, null);
      else if (m.pre) this.becomeCandidate();
      else this.becomeLeader();
    } else if (no >= this.quorum) {
      this.becomeFollower(this.term, null);
    }
  }
}
