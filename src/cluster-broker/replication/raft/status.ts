/**
 * RaftStatus: what a member tells about itself without changing anything: role, term, leader,
 * commit, whether it is quorate, when its next timer falls due, what became of a proposal.
 */
import { RaftState } from './state.js';
import type { RecoveryReason, Role } from './types.js';

export type ProposalStatus = 'committed' | 'pending' | 'lost' | 'unknown';

const newestFirst = (a: number, b: number): number => b - a;

export abstract class RaftStatus extends RaftState {
  get currentTerm(): number {
    return this.term;
  }
  get currentRole(): Role {
    return this.role;
  }
  get leaderId(): string | null {
    return this.leader;
  }
  get commitIndex(): number {
    return this.commit;
  }
  get appliedIndex(): number {
    return this.applied;
  }
  get votedFor(): string | null {
    return this.vote;
  }
  /** Why this member is still recovering (takes no part in votes or commits), or null. */
  get recoveringReason(): RecoveryReason | null {
    return this.recovering;
  }
  isLeader(): boolean {
    return this.role === 'leader';
  }
  /** Leader only: the highest index known replicated on `peer` (undefined elsewhere). */
  matchIndexOf(peer: string): number | undefined {
    return this.role === 'leader' ? this.progress.get(peer)?.match : undefined;
  }

  /**
   * Leader: heard from a majority (itself included) within the max election timeout.
   * Follower: heard from a current leader within the max election timeout. Otherwise false.
   * A member that is not quorate must stop serving clients.
   */
  isQuorate(now: number): boolean {
    if (this.role === 'leader') {
      let heard = 1;
      // strictly within, as a follower's: the moment it lapses is then the first one it is false
      // at, which a driver that sleeps until nextDeadline() wakes at
      for (const pr of this.progress.values()) if (now - pr.lastHeard < this.electionMax) heard++;
      return heard >= this.quorum;
    }
    return (
      this.role === 'follower' && this.leader !== null && now - this.lastLeaderContact < this.electionMax
    );
  }

  /** Leader that is quorate and has committed an entry of its own term: its committed state is current. */
  canServeReads(now: number): boolean {
    return this.role === 'leader' && this.isQuorate(now) && this.log.term(this.commit) === this.term;
  }

  /**
   * The earliest time at which `tick` has something to do or `isQuorate` turns false with no
   * input in between: a leader's next heartbeat, or the moment it stops hearing from a majority
   * (check-quorum steps it down then); anyone else's election deadline, or the moment a follower's
   * leader contact lapses. A driver that sleeps until then (docs/cluster-member.md#raft-timer)
   * misses nothing a fixed tick would see; an input may move it earlier (a new term, a won
   * election, `peerDisconnected`), so ask again after each.
   */
  nextDeadline(now: number = this.now): number {
    if (this.role === 'leader') return Math.min(this.heartbeatDue, this.quorumLapsesAt(now));
    if (this.role === 'follower' && this.leader !== null) {
      const lapse = this.lastLeaderContact + this.electionMax;
      if (lapse > now) return Math.min(this.electionDeadline, lapse);
    }
    return this.electionDeadline;
  }

  /**
   * Leader: from when on it hears from no majority (its own vote and the peers heard within the
   * max election timeout), if no answer comes in between; Infinity when that is not after `now`
   * (it is not quorate: only an answer changes that) or it needs no peer.
   */
  private quorumLapsesAt(now: number): number {
    const needed = this.quorum - 1;
    if (needed <= 0) return Number.POSITIVE_INFINITY;
    // the needed-th most recent answer (asked on every input: no array for the usual 3 members)
    let last = Number.NEGATIVE_INFINITY;
    if (needed === 1) for (const pr of this.progress.values()) last = Math.max(last, pr.lastHeard);
    else {
      // five members or more: sorted in a scratch array kept for it (asked once per burst)
      const heard = this.heardScratch;
      heard.length = 0;
      for (const pr of this.progress.values()) heard.push(pr.lastHeard);
      heard.sort(newestFirst);
      last = heard[needed - 1] ?? Number.NEGATIVE_INFINITY;
    }
    // isQuorate counts a peer while now - lastHeard < electionMax: false from this moment
    const at = last + this.electionMax;
    return at > now ? at : Number.POSITIVE_INFINITY;
  }

  /** What became of a proposal answered with (index, term). */
  proposalStatus(index: number, term: number): ProposalStatus {
    const t = this.log.term(index);
    if (t !== undefined && t !== term) return 'lost';
    if (t === term) return index <= this.commit ? 'committed' : 'pending';
    return 'unknown';
  }
}
