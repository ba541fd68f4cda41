/**
 * RaftState: what one member's RaftCore knows (its configuration, HardState, role, timers, the
 * leader's per-follower Progress, pending output) and the few helpers every part of the protocol
 * uses. The protocol itself is layered on top, one job per file (README.md): status.ts,
 * recovery.ts, leader-side.ts, follower-side.ts, elections.ts, then core.ts (inputs and Ready).
 * Subclasses, not collaborators, so each rule still reads `this.term`, `this.send(...)`: one
 * object per member, no extra allocation or indirection on a message's path.
 */
import { RaftLog } from './log.js';
import type { Progress } from './progress.js';
import type {
  InitialState,
  Message,
  RaftConfig,
  RecoveryReason,
  Role,
  Snapshot,
  SoftState,
  UnsafeFlags,
} from './types.js';

export abstract class RaftState {
  readonly id: string;
  readonly members: readonly string[];
  readonly peers: readonly string[];
  protected readonly quorum: number;
  protected readonly electionMin: number;
  protected readonly electionMax: number;
  protected readonly heartbeatInterval: number;
  protected readonly leaderLostDelay: number;
  protected readonly leaderLostStagger: number;
  protected readonly preVote: boolean;
  protected readonly checkQuorum: boolean;
  protected readonly random: () => number;
  protected readonly maxBytesPerAppend: number;
  protected readonly maxInflight: number;
  protected readonly unsafe: UnsafeFlags;

  protected term: number;
  protected vote: string | null;
  protected role: Role = 'follower';
  protected leader: string | null = null;
  readonly log: RaftLog;
  protected commit: number;
  /** Entries <= applied were handed to the driver to apply. */
  protected applied: number;

  protected now: number;
  protected electionDeadline = 0;
  protected heartbeatDue = 0;
  protected lastLeaderContact = Number.NEGATIVE_INFINITY;
  /** When the transport last reported our leader's connection closed, and which leader. */
  protected leaderLostAt = Number.NEGATIVE_INFINITY;
  protected lostLeader: string | null = null;
  protected votes = new Map<string, boolean>();
  protected progress = new Map<string, Progress>();

  protected outbox: Message[] = [];
  /** Messages that depend on no pending write (see takeEagerMessages). */
  protected eagerOutbox: Message[] = [];
  protected hardStateDirty = false;
  protected snapshotToPersist: Snapshot | undefined;
  protected snapshotToRestore: Snapshot | undefined;
  protected truncateFromPending: number | undefined;
  protected lastSoft: SoftState;
  /** Lost promises are possible (HardState.recovering): no votes, no campaign, acks not counted. */
  protected recovering: RecoveryReason | null;
  /** While blank: the peers that said they are blank too, in answer to this incarnation's requests. */
  protected readonly blankPeers = new Set<string>();
  /**
   * This incarnation's id. Carried by its vote requests while blank and echoed by blank answers,
   * and carried by its answers while recovering and echoed by the leader's news that it has caught
   * up: only answers to this incarnation count, so one meant for an earlier incarnation (the same
   * member before its store was emptied or damaged), delivered late, cannot end this one's
   * recovery. RaftConfig.incarnation (the Replica draws one at random per run), else taken from the
   * start time: never from the random source, whose draws the simulation's seeds replay.
   */
  protected readonly incarnation: number;
  /** quorumLapsesAt's peers' last-heard times, reused (five members or more). */
  protected readonly heardScratch: number[] = [];

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

  softState(): SoftState {
    return { role: this.role, term: this.term, leaderId: this.leader };
  }

  protected resetElectionDeadline(): void {
    this.electionDeadline =
      this.now + this.electionMin + this.random() * (this.electionMax - this.electionMin);
  }

  protected send(m: Message): void {
    this.outbox.push(m);
  }
}
