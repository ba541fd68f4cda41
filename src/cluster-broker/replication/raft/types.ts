/**
 * Types of the sans-I/O replication core (Raft). The core knows no sockets, files or clocks:
 * it takes messages and the time and hands back a `Ready` (what to persist, then what to send,
 * then what to apply). See core.ts and the layers it extends (README.md) for the rules.
 */

/** One log entry. `data === null` is the no-op a new leader appends to commit its term. */
export interface Entry {
  readonly index: number;
  readonly term: number;
  readonly data: Uint8Array | null;
}

/**
 * A snapshot's bytes: one buffer, or parts read one after the other. A state machine may hand out
 * parts that are views of its own stored bytes (which never change once stored) instead of
 * copying a large state into one buffer; whoever needs one buffer joins them (snapshotBytes).
 */
export type SnapshotData = Uint8Array | readonly Uint8Array[];

/** A snapshot of the application state covering the log up to and including `index`. */
export interface Snapshot {
  readonly index: number;
  readonly term: number;
  readonly data: SnapshotData;
}

/** The snapshot's bytes as one buffer (parts are joined: a copy). */
export function snapshotBytes(data: SnapshotData): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data.length === 1) return data[0]!;
  const out = new Uint8Array(snapshotLength(data));
  let at = 0;
  for (const p of data) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** How many bytes the snapshot holds. */
export function snapshotLength(data: SnapshotData): number {
  if (data instanceof Uint8Array) return data.length;
  let n = 0;
  for (const p of data) n += p.length;
  return n;
}

/**
 * Why a member may have lost promises it made (votes cast, entries acknowledged), so that it must
 * not act on them (docs/production.md, "Damaged cluster member"):
 * - 'damaged': its store was corrupt and the damaged files were moved aside;
 * - 'blank': its store did not exist (first start of a new cluster, or an emptied data dir: the
 *   member cannot tell which by itself).
 */
export type RecoveryReason = 'damaged' | 'blank';

/** What must survive a crash besides the log: the current term and the vote cast in it. */
export interface HardState {
  readonly term: number;
  readonly vote: string | null;
  /**
   * Set while the member is recovering (see RecoveryReason): it grants no vote, does not stand,
   * and its acknowledgements do not count toward commit, until a leader that committed a fresh
   * entry without it tells it that it has caught up (a blank one also when every member says it
   * is blank: a new cluster; recovery.ts). Durable, so a restart in the middle of catching up does not forget it.
   */
  readonly recovering?: RecoveryReason;
}

export type Role = 'follower' | 'pre-candidate' | 'candidate' | 'leader';

interface MessageBase {
  readonly from: string;
  readonly to: string;
  readonly term: number;
}

/** AppendEntries (also the heartbeat, with no entries). */
export interface AppendMessage extends MessageBase {
  readonly type: 'append';
  readonly prevIndex: number;
  readonly prevTerm: number;
  readonly entries: readonly Entry[];
  readonly commit: number;
}

/**
 * Answer to append or snapshot. On success `matchIndex` is the last index known to match the
 * leader. On failure `rejectedPrev` is the prevIndex that did not match and `hintIndex` the
 * follower's guess of the last index that may match (fast back-up).
 */
export interface AppendResponseMessage extends MessageBase {
  readonly type: 'append-response';
  readonly success: boolean;
  readonly matchIndex: number;
  readonly rejectedPrev: number;
  readonly hintIndex: number;
  /** The follower is recovering (HardState.recovering): its match must not count toward commit. */
  readonly recovering?: boolean;
  /** With `recovering`: the follower's incarnation, which the leader's `recovered` news echoes. */
  readonly recoveryRound?: number;
}

/** RequestVote; `pre` marks a pre-vote (term is the candidate's term + 1, nobody changes state). */
export interface VoteMessage extends MessageBase {
  readonly type: 'vote';
  readonly pre: boolean;
  readonly lastIndex: number;
  readonly lastTerm: number;
  /** The sender holds nothing: its store is blank, or it never passed term 0 and its log is empty. */
  readonly blank?: boolean;
  /** A blank sender's round of requests: a blank answer echoes it, and only such answers count. */
  readonly blankRound?: number;
}

export interface VoteResponseMessage extends MessageBase {
  readonly type: 'vote-response';
  readonly pre: boolean;
  readonly granted: boolean;
  /** The sender holds nothing: its store is blank, or it never passed term 0 and its log is empty. */
  readonly blank?: boolean;
  /** With `blank`: the round of the request this answers (VoteMessage.blankRound). */
  readonly blankRound?: number;
}

/**
 * Leader liveness (as in etcd/raft): no log check. `commit` is min(leader commit, follower match),
 * so the follower already holds those entries. The follower answers at once with a
 * heartbeat-response, which depends on no write (it only says "I follow you in this term").
 */
export interface HeartbeatMessage extends MessageBase {
  readonly type: 'heartbeat';
  readonly commit: number;
  /** The leader tells a recovering follower it has caught up (see HardState.recovering). */
  readonly recovered?: boolean;
  /**
   * With `recovered`: the incarnation whose answers the news is about (AppendResponseMessage.
   * recoveryRound); another incarnation of the follower ignores it.
   */
  readonly recoveryRound?: number;
}

export interface HeartbeatResponseMessage extends MessageBase {
  readonly type: 'heartbeat-response';
}

/** InstallSnapshot, sent whole (the broker's state is small enough for one frame). */
export interface SnapshotMessage extends MessageBase {
  readonly type: 'snapshot';
  readonly snapshot: Snapshot;
}

export type Message =
  | AppendMessage
  | AppendResponseMessage
  | VoteMessage
  | VoteResponseMessage
  | SnapshotMessage
  | HeartbeatMessage
  | HeartbeatResponseMessage;

/**
 * Writes the driver must make durable (one fsync is enough for all of them) BEFORE it sends any
 * message of the same Ready. Apply order: snapshot, then truncateFrom, then entries (an entry at
 * index i also replaces every entry >= i already stored), then hardState.
 */
export interface PersistOps {
  /** New term/vote, when they changed. */
  readonly hardState?: HardState;
  /** A snapshot to store; the log prefix up to snapshot.index may then be dropped. */
  readonly snapshot?: Snapshot;
  /** Drop every stored entry with index >= truncateFrom (before appending `entries`). */
  readonly truncateFrom?: number;
  /** Entries to append, contiguous and ascending. */
  readonly entries: readonly Entry[];
}

/** What changed about the member's role, for the broker ("close client links", "serve"). */
export interface SoftState {
  readonly role: Role;
  readonly term: number;
  readonly leaderId: string | null;
}

/**
 * The output of the core. The driver MUST:
 *   1. make `persist` durable (write + fsync),
 *   2. then send `messages`,
 *   3. then restore `restoreSnapshot` (if any) and apply `apply` in order,
 *   4. then call `core.advance(ready)`.
 * Readies must be handled strictly one after another, in the order they were taken.
 */
export interface Ready {
  readonly persist: PersistOps;
  readonly messages: readonly Message[];
  /** A snapshot the application must load (installed from the leader) before applying `apply`. */
  readonly restoreSnapshot?: Snapshot;
  /** Committed entries, in index order, to apply to the state machine. */
  readonly apply: readonly Entry[];
  /** Set when role, term or leader changed since the previous Ready. */
  readonly softState?: SoftState;
  /**
   * Set when the log was cut: every proposal with index >= truncatedFrom that was not re-appended
   * with the same term is lost.
   */
  readonly truncatedFrom?: number;
}

/** State the core starts from (what storage recovered). */
export interface InitialState {
  readonly hardState: HardState;
  readonly snapshot?: Snapshot;
  /** Entries after the snapshot, contiguous. */
  readonly entries: readonly Entry[];
}

/**
 * Deliberately broken rules, so the simulation can prove that its checker catches them.
 * Never set outside tests.
 */
export interface UnsafeFlags {
  /** Grant votes without the "candidate's log is at least as up to date" check. */
  readonly skipUpToDateCheck?: boolean;
  /** Commit entries of earlier terms by counting replicas (Raft paper, figure 8). */
  readonly commitOldTermsByCount?: boolean;
  /** Ignore HardState.recovering: a member that lost its store votes and acknowledges as if intact. */
  readonly ignoreRecovery?: boolean;
  /**
   * The old bootstrap rule: a blank member votes for candidates with empty logs and takes a
   * majority of blank members (not all) for a new cluster, so an emptied data dir can join a
   * member that never caught up and elect a leader without the committed entries.
   */
  readonly bootstrapOnBlankMajority?: boolean;
  /**
   * The old end of recovery: a leader declares a recovering follower caught up on any commit of
   * its own term, even one from before it learned (maybe counted with the follower's lost
   * acknowledgements, by a leader a later term has replaced), with no fresh entry committed
   * without the follower.
   */
  readonly endRecoveryOnOldCommit?: boolean;
  /**
   * The old blank count: any blank claim a vote or vote-response ever carried counts, even one
   * sent long before (a member's first start, delivered late or twice), not only answers to the
   * blank member's current round of requests.
   */
  readonly countStaleBlankClaims?: boolean;
  /**
   * The old news of recovery: a recovering member ends its recovery on any `recovered` heartbeat,
   * even one the leader sent about an earlier incarnation of it (before it lost its store again),
   * delivered late.
   */
  readonly acceptStaleRecoveredNews?: boolean;
}

export interface RaftConfig {
  /** This member's id. */
  readonly id: string;
  /**
   * This run's id, 1..2^31-1 (RaftCore's `incarnation`): it must differ from every earlier run's
   * of the member. Default: from `now` at construction, which a simulated clock makes distinct; a
   * process clock (time since the process started) may not, so the Replica draws one at random.
   */
  readonly incarnation?: number;
  /** Every member's id, this one included (static membership). */
  readonly members: readonly string[];
  /** Election timeout is uniformly random in [min, max) ms. Defaults 150 / 300. */
  readonly electionTimeoutMin?: number;
  readonly electionTimeoutMax?: number;
  /**
   * When the transport reports that the leader's connection closed (a killed or stopped process
   * closes its sockets, so peers learn at once), a follower campaigns (pre-vote first) after
   * `leaderLostDelay` + its rank among the remaining members x `leaderLostStagger` ms (plus up
   * to half a stagger of jitter) instead of a whole election timeout. The rank staggers the
   * survivors so that two of them seldom campaign at once and split the vote. Defaults 10 / 40.
   */
  readonly leaderLostDelay?: number;
  readonly leaderLostStagger?: number;
  /** Heartbeat interval, ms. Default 50. */
  readonly heartbeatInterval?: number;
  /** Pre-vote (Raft thesis 9.6). Default true. */
  readonly preVote?: boolean;
  /** A leader that hears from no majority for an election timeout steps down. Default true. */
  readonly checkQuorum?: boolean;
  /** Random number in [0, 1); inject a seeded one for simulation. Default Math.random. */
  readonly random?: () => number;
  /** Upper bound of entry bytes per append message. Default 1 MiB. */
  readonly maxBytesPerAppend?: number;
  /** Append messages in flight per follower (pipelining). Default 256. */
  readonly maxInflight?: number;
  readonly unsafe?: UnsafeFlags;
}
