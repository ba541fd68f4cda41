/**
 * RaftRecovery: a member that may have lost promises (HardState.recovering: a blank or damaged
 * store). Its own side: blank claims that end a new cluster's wait (noteBlankPeer, holdsNothing),
 * and the end of its recovery (finishRecovery). The leader's side: the proof entry it appends for
 * a recovering follower and the news that the follower has caught up (maybeEndRecovery).
 */
import type { Progress } from './progress.js';
import { RaftStatus } from './status.js';
import type { VoteMessage } from './types.js';

export abstract class RaftRecovery extends RaftStatus {
  /** Advance the commit index if a quorum holds more (leader-side.ts). */
  protected abstract maybeCommit(): boolean;

  /**
   * Every member blank (this one included) means a new cluster, or one that lost every store (then
   * there is nothing left to keep): none of us has promises to keep. A majority is not enough: a
   * member whose data dir was emptied is blank too, and with a member that never caught up it
   * would make a majority that forgets what the others committed (docs/production.md#blank-member).
   * So a new cluster forms once all its members have started; until then it waits. A claim counts
   * only as the answer to a request of this incarnation (blankRound): a blank claim sent long ago
   * (a member's first start, delivered late or twice after it and we had since held data and lost
   * it again) would otherwise end a recovery that must wait (simulation seed 357,612,612).
   */
  protected noteBlankPeer(peer: string): void {
    if (this.recovering !== 'blank') return;
    this.blankPeers.add(peer);
    const needed = this.unsafe.bootstrapOnBlankMajority ? this.quorum - 1 : this.peers.length;
    if (this.blankPeers.size >= needed) this.finishRecovery();
  }

  /**
   * Blank, or intact and never past term 0 with an empty log: it has cast no vote and holds no
   * entry. A member that found the cluster new keeps saying so, or the members that have not
   * heard every other one blank yet would wait forever for a flag it no longer sends.
   */
  protected holdsNothing(): boolean {
    if (this.recovering === 'blank') return true;
    if (this.unsafe.bootstrapOnBlankMajority) return false;
    return this.recovering === null && this.term === 0 && this.log.lastIndex() === 0;
  }

  /** The old count of blank claims (UnsafeFlags), which the old bootstrap rule came with. */
  protected get countsStaleBlankClaims(): boolean {
    return this.unsafe.countStaleBlankClaims === true || this.unsafe.bootstrapOnBlankMajority === true;
  }

  /** The old bootstrap rule, kept only as a bug for the simulation to catch (UnsafeFlags). */
  protected blankVotesForEmptyLog(m: VoteMessage): boolean {
    return (
      this.unsafe.bootstrapOnBlankMajority === true &&
      this.recovering === 'blank' &&
      m.lastIndex === 0 &&
      m.lastTerm === 0
    );
  }

  protected finishRecovery(): void {
    this.recovering = null;
    this.hardStateDirty = true;
  }

  /**
   * A follower's recovery starts again: it must catch up to what we have committed by now. A
   * member already recovering has cast no vote since its loss (it grants none): its proof stands;
   * one we had declared caught up may have voted since, so it needs a new one (and this comes once
   * per declaration, so proofs never multiply).
   */
  protected reopenRecovery(pr: Progress): void {
    if (!pr.recovering) pr.recoveryProof = this.appendRecoveryProof();
    pr.recovering = true;
    pr.recoveryDeclared = false;
    pr.recoveryTarget = Math.max(pr.recoveryTarget, this.commit);
  }

  /**
   * Append an empty entry of our term for a follower found recovering (maybeEndRecovery) and send
   * it at once: its commit by a majority without the follower ends the recovery even when no
   * client writes (it goes out with the next appends, as a proposal's). Returns its index.
   */
  protected appendRecoveryProof(): number {
    const index = this.log.lastIndex() + 1;
    this.log.append({ index, term: this.term, data: null });
    return index;
  }

  /**
   * A recovering follower has caught up once it holds everything we had committed when we learned
   * it was recovering (commits counted with acknowledgements it lost included) and our current
   * commit, and once a majority without it has committed the entry we appended when we learned
   * (appendRecoveryProof). Only that proof is fresh: those acknowledgements were sent after the
   * member lost its store, so we are no stale leader (with three members they come from both
   * others, every candidate it can have voted for among them; the case left open with five:
   * docs/production.md#damaged-cluster-member). A commit of our own term from before we learned
   * proves nothing: it may have been counted with the member's own lost acknowledgements, by a leader
   * that a later term, one this member voted in, has since replaced. We tell it in a heartbeat;
   * until it has heard, it keeps saying it is recovering and we check again.
   */
  protected maybeEndRecovery(to: string, pr: Progress): void {
    if (pr.match < pr.recoveryTarget || pr.match < this.commit) return;
    if (this.commit < pr.recoveryProof && !this.unsafe.endRecoveryOnOldCommit) return;
    if (this.log.term(this.commit) !== this.term) return;
    // once declared, its later (or delayed) recovering answers only get the news again: going
    // back to ignoring its unflagged answers could wait forever for a flag it no longer sends
    pr.recovering = false;
    pr.recoveryDeclared = true;
    this.eagerOutbox.push({
      type: 'heartbeat',
      from: this.id,
      to,
      term: this.term,
      commit: Math.min(pr.match, this.commit),
      recovered: true,
      ...(pr.recoveryRound !== undefined ? { recoveryRound: pr.recoveryRound } : {}),
    });
    this.maybeCommit();
  }
}
