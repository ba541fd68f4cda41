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
 */
import { RaftLog } from './log.js';
import { Progress } from './progress.js';
import type {
  AppendMessage,
  AppendResponseMessage,
  Entry,
  HardState,
  HeartbeatMessage,
  InitialState,
  Message,
  RaftConfig,
  Ready,
  RecoveryReason,
  Role,
  Snapshot,
  SnapshotData,
  SnapshotMessage,
  SoftState,
  UnsafeFlags,
  VoteMessage,
  VoteResponseMessage,
} from './types.js';

export type ProposalStatus = 'committed' | 'pending' | 'lost' | 'unknown';

const newestFirst = (a: number, b: number): number => b - a;

export class RaftCore {
  readonly id: string;
  readonly members: readonly string[];
  readonly peers: readonly string[];
  private readonly quorum: number;
  private readonly electionMin: number;
  private readonly electionMax: number;
  private readonly heartbeatInterval: number;
  private readonly leaderLostDelay: number;
  private readonly leaderLostStagger: number;
  private readonly preVote: boolean;
  private readonly checkQuorum: boolean;
  private readonly random: () => number;
  private readonly maxBytesPerAppend: number;
  private readonly maxInflight: number;
  private readonly unsafe: UnsafeFlags;

  private term: number;
  private vote: string | null;
  private role: Role = 'follower';
  private leader: string | null = null;
  readonly log: RaftLog;
  private commit: number;
  /** Entries <= applied were handed to the driver to apply. */
  private applied: number;

  private now: number;
  private electionDeadline = 0;
  private heartbeatDue = 0;
  private lastLeaderContact = Number.NEGATIVE_INFINITY;
  /** When the transport last reported our leader's connection closed, and which leader. */
  private leaderLostAt = Number.NEGATIVE_INFINITY;
  private lostLeader: string | null = null;
  private votes = new Map<string, boolean>();
  private progress = new Map<string, Progress>();

  private outbox: Message[] = [];
  /** Messages that depend on no pending write (see takeEagerMessages). */
  private eagerOutbox: Message[] = [];
  private hardStateDirty = false;
  private snapshotToPersist: Snapshot | undefined;
  private snapshotToRestore: Snapshot | undefined;
  private truncateFromPending: number | undefined;
  private lastSoft: SoftState;
  /** Lost promises are possible (HardState.recovering): no votes, no campaign, acks not counted. */
  private recovering: RecoveryReason | null;
  /** While blank: the peers that said they are blank too, in answer to this incarnation's requests. */
  private readonly blankPeers = new Set<string>();
  /**
   * This incarnation's id. Carried by its vote requests while blank and echoed by blank answers,
   * and carried by its answers while recovering and echoed by the leader's news that it has caught
   * up: only answers to this incarnation count, so one meant for an earlier incarnation (the same
   * member before its store was emptied or damaged), delivered late, cannot end this one's
   * recovery. RaftConfig.incarnation (the Replica draws one at random per run), else taken from the
   * start time: never from the random source, whose draws the simulation's seeds replay.
   */
  private readonly incarnation: number;
  /** quorumLapsesAt's peers' last-heard times, reused (five members or more). */
  private readonly heardScratch: number[] = [];

  constructor(config: RaftConfig, initial: InitialState, now: number) {
    this.id = config.id;
    this.members = [...config.members];
    if (!this.members.includes(this.id))
      throw new Error(`member ${this.id} not in ${this.members.join(',')}`);
    this.peers = this.members.filter((m) => m !== this.id);
    this.quorum = Math.floor(this.members.length / 2) + 1;
    this.electionMin = config.electionTimeoutMin ?? 150;
    this.electionMax = config.electionTimeoutMax ?? 300;
    this.heartbeatInterval = config.heartbeatInterval ?? 50;
    this.leaderLostDelay = config.leaderLostDelay ?? 10;
    this.leaderLostStagger = config.leaderLostStagger ?? 40;
    this.preVote = config.preVote ?? true;
    this.checkQuorum = config.checkQuorum ?? true;
    this.random = config.random ?? Math.random;
    this.incarnation = config.incarnation ?? (Math.floor(now * 1000) % 0x7fffffff) + 1;
    this.maxBytesPerAppend = config.maxBytesPerAppend ?? 1024 * 1024;
    this.maxInflight = config.maxInflight ?? 256;
    this.unsafe = config.unsafe ?? {};
    this.term = initial.hardState.term;
    this.vote = initial.hardState.vote;
    this.recovering = this.unsafe.ignoreRecovery ? null : (initial.hardState.recovering ?? null);
    this.log = new RaftLog(initial.snapshot, initial.entries);
    this.commit = this.log.snapshotIndex;
    this.applied = this.log.snapshotIndex;
    this.now = now;
    this.resetElectionDeadline();
    this.lastSoft = this.softState();
  }

  // ---- status ------------------------------------------------------------------------------

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

  softState(): SoftState {
    return { role: this.role, term: this.term, leaderId: this.leader };
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
   * Within an election timeout of the hint, a pre-vote is retried as soon as the first one went
   * out: one refused by a peer that had not yet seen the connection close (its lease still held)
   * or by a peer with a longer log would otherwise cost a whole timeout. Pre-votes change no term,
   * so a late grant still counts in the next round. A real campaign keeps its full timeout: a
   * retry shorter than a round trip on a loaded host would only ever raise the term.
   */
  private campaignSoonAfterLeaderLost(): void {
    if (!this.leaderRecentlyLost()) return;
    const delay =
      this.leaderLostDelay + (this.survivorRank(this.id) + this.random() / 2) * this.leaderLostStagger;
    this.electionDeadline = Math.min(this.electionDeadline, this.now + delay);
  }

  private leaderRecentlyLost(): boolean {
    return this.now - this.leaderLostAt < this.electionMax;
  }

  /** Position of `id` among the members but the lost leader: who campaigns first after the hint. */
  private survivorRank(id: string): number {
    return Math.max(0, this.members.filter((m) => m !== this.lostLeader).indexOf(id));
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

  // ---- roles -------------------------------------------------------------------------------

  private resetElectionDeadline(): void {
    this.electionDeadline =
      this.now + this.electionMin + this.random() * (this.electionMax - this.electionMin);
  }

  private inLease(): boolean {
    if (!this.checkQuorum) return false;
    if (this.role === 'leader') return this.isQuorate(this.now);
    return this.leader !== null && this.now - this.lastLeaderContact < this.electionMin;
  }

  private becomeFollower(term: number, leader: string | null): void {
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

  private campaign(): void {
    if (this.preVote) this.becomePreCandidate();
    else this.becomeCandidate();
  }

  private becomePreCandidate(): void {
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

  private becomeCandidate(): void {
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

  private becomeLeader(): void {
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

  // ---- elections ---------------------------------------------------------------------------

  private voteRequest(to: string, pre: boolean): VoteMessage {
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
  private voteResponse(req: VoteMessage, granted: boolean, term: number): VoteResponseMessage {
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

  private handleVote(m: VoteMessage): void {
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

  private handleVoteResponse(m: VoteResponseMessage): void {
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

  // ---- replication (follower side) ---------------------------------------------------------

  private appendResponse(
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
  private noteBlankPeer(peer: string): void {
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
  private holdsNothing(): boolean {
    if (this.recovering === 'blank') return true;
    if (this.unsafe.bootstrapOnBlankMajority) return false;
    return this.recovering === null && this.term === 0 && this.log.lastIndex() === 0;
  }

  /** The old count of blank claims (UnsafeFlags), which the old bootstrap rule came with. */
  private get countsStaleBlankClaims(): boolean {
    return this.unsafe.countStaleBlankClaims === true || this.unsafe.bootstrapOnBlankMajority === true;
  }

  /** The old bootstrap rule, kept only as a bug for the simulation to catch (UnsafeFlags). */
  private blankVotesForEmptyLog(m: VoteMessage): boolean {
    return (
      this.unsafe.bootstrapOnBlankMajority === true &&
      this.recovering === 'blank' &&
      m.lastIndex === 0 &&
      m.lastTerm === 0
    );
  }

  private finishRecovery(): void {
    this.recovering = null;
    this.hardStateDirty = true;
  }

  private handleAppend(m: AppendMessage): void {
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

  private handleHeartbeat(m: HeartbeatMessage): void {
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

  private handleSnapshot(m: SnapshotMessage): void {
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

  // ---- replication (leader side) -----------------------------------------------------------

  private wantsAppend(pr: Progress): boolean {
    if (pr.mode === 'snapshot') return false;
    if (pr.mode === 'probe') return !pr.paused;
    return pr.next <= this.log.lastIndex() && pr.inflight.length < this.maxInflight;
  }

  private sendHeartbeat(to: string): void {
    const pr = this.progress.get(to)!;
    const commit = Math.min(pr.match, this.commit);
    this.eagerOutbox.push({ type: 'heartbeat', from: this.id, to, term: this.term, commit });
  }

  /**
   * A follower answered a heartbeat. Restart replication that may have stalled on lost messages:
   * a probe is re-sent; a snapshot or a pipeline with no answer for a while restarts as a probe.
   */
  private handleHeartbeatResponse(from: string): void {
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
  private askRecoveringFollower(to: string, pr: Progress): void {
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm !== undefined) this.pushAppend(to, prevIndex, prevTerm, []);
  }

  private pushAppend(to: string, prevIndex: number, prevTerm: number, entries: readonly Entry[]): void {
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
  private sendAppend(to: string): void {
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

  /**
   * A follower's recovery starts again: it must catch up to what we have committed by now. A
   * member already recovering has cast no vote since its loss (it grants none): its proof stands;
   * one we had declared caught up may have voted since, so it needs a new one (and this comes once
   * per declaration, so proofs never multiply).
   */
  private reopenRecovery(pr: Progress): void {
    if (!pr.recovering) pr.recoveryProof = this.appendRecoveryProof();
    pr.recovering = true;
    pr.recoveryDeclared = false;
    pr.recoveryTarget = Math.max(pr.recoveryTarget, this.commit);
  }

  private handleAppendResponse(m: AppendResponseMessage): void {
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

  /**
   * Append an empty entry of our term for a follower found recovering (maybeEndRecovery) and send
   * it at once: its commit by a majority without the follower ends the recovery even when no
   * client writes (it goes out with the next appends, as a proposal's). Returns its index.
   */
  private appendRecoveryProof(): number {
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
  private maybeEndRecovery(to: string, pr: Progress): void {
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

  /** Advance the commit index if a quorum holds more; true when it moved (followers told). */
  private maybeCommit(): boolean {
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

  private send(m: Message): void {
    this.outbox.push(m);
  }
}

export type { Entry };
