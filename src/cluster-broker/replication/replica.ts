/**
 * Replica: the real driver of one member. It feeds the RaftCore with TCP messages and the clock,
 * and handles each Ready in the required order: persist (FileStorage, fsync) -> send (TCP) ->
 * apply (the application's StateMachine) -> advance. While one Ready is being made durable, new
 * proposals and messages accumulate in the core and go into the next Ready together: that is the
 * group commit. What depends on no write (the leader's appends and heartbeats, a follower's
 * heartbeat answers: RaftCore.takeEagerMessages) goes out at once, and before each Ready is taken.
 */
import { randomInt } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { Logger } from '../../common/logger.js';
import { CompactionPace, DEFAULT_MAX_LOG_BYTES, raftCompactionDue } from '../files/compaction-pace.js';
import type { DurableFs } from '../files/durable-fs.js';
import type { LatencyHistogram } from '../files/latency-histogram.js';
import type { ClusterTlsOptions } from './cluster-tls.js';
import { NotLeaderError, ProposalOutcomeError, ReplicationError } from './errors.js';
import { FileStorage, type StoreDamage } from './file-storage.js';
import { assertEntryFits } from './log-records.js';
import { RaftCore } from './raft/core.js';
import type {
  Entry,
  Message,
  RaftConfig,
  Ready,
  RecoveryReason,
  Role,
  Snapshot,
  SnapshotData,
  SoftState,
} from './raft/types.js';
import {
  type ReplicaSeams,
  type ReplicaTimer,
  type ReplicaTransport,
  type TimerFactory,
  type TransportFactory,
  timeoutTimer,
  type UnsafeDriverFlags,
} from './replica-seams.js';
import { withoutSupersededAnswers } from './superseded-answers.js';
import { type PeerAddress, TcpTransport } from './tcp-transport.js';
import { amqpWireCodec, type WireCodec } from './wire.js';

/** A write (append + fsync) that held the Ready loop this long is logged at debug... */
const SLOW_PERSIST_DEBUG_MS = 200;
/** ...and from this long at warn: every acknowledgement of the cluster waited on this disk. */
const SLOW_PERSIST_WARN_MS = 1_000;
/**
 * The timer sleeps until the core's next deadline, but never longer than this, or twice the
 * heartbeat interval if that is longer (a follower that hears its leader then never wakes for
 * it): a stall is measured from the last moment this member is known to have run (an input or
 * the timer), so this bounds how much idle time before a stall is counted as stalled
 * (docs/cluster-member.md#raft-timer).
 */
const MAX_SLEEP_MS = 100;
/** The timer firing this much later than armed means this process did not run meanwhile. */
const STALL_MS = 90;

/** The application replicated by the log (the broker's event applier). */
export interface StateMachine {
  /** Apply one committed entry, in log order. `entry.data === null` is a leader no-op. */
  apply(entry: Entry): void;
  /** Replace the whole state by a snapshot (at start-up, and when the leader sends one). */
  restore(snapshot: Snapshot): void;
  /**
   * Serialize the state as of the last applied entry; enables log compaction. Parts may be views
   * of bytes the state keeps, provided those never change (the snapshot is kept and sent later).
   */
  snapshot?(): SnapshotData;
  /** Bytes of live data a snapshot would hold (cheap to ask); paces compaction of a large state. */
  liveBytes?(): number;
}

export interface ReplicaOptions {
  readonly id: string;
  readonly clusterId: string;
  /** Every member (this one included) and the address to dial it at. */
  readonly members: Readonly<Record<string, PeerAddress>>;
  /** Where to listen; defaults to this member's own entry in `members`. */
  readonly listen?: PeerAddress;
  readonly dataDir: string;
  /** Where a damaged store's files are moved (default `<dataDir>/quarantine`). */
  readonly quarantineDir?: string;
  readonly stateMachine: StateMachine;
  /** Timeouts and flags of the core (ids and members come from above). */
  readonly raft?: Omit<RaftConfig, 'id' | 'members'>;
  /** The file system the store goes through (default node:fs; tests model a power loss). */
  readonly fs?: DurableFs;
  /** One write + fsync per Ready (default true) or one per entry. */
  readonly groupCommit?: boolean;
  /**
   * Compact after this many applied entries (default 10000; 0 never), once the log also pays for a
   * snapshot of the state (store/compaction-pace.ts). Needs stateMachine.snapshot.
   */
  readonly snapshotEvery?: number;
  /** Compact at this many bytes of log since the last snapshot whatever the state (default 64 MiB). */
  readonly maxLogBytes?: number;
  /** The cluster secret members prove to each other (see handshake.ts); absent: none. */
  readonly secret?: Uint8Array;
  /** Mutual TLS between members. */
  readonly tls?: ClusterTlsOptions;
  /** Message encoding between members; default AMQP values (`amqpWireCodec`); a cluster member passes `binaryWireCodec`. */
  readonly codec?: WireCodec;
  readonly logger?: Logger;
  /** Monotonic milliseconds; default performance.now. */
  readonly clock?: () => number;
}

export interface ReplicaEvents {
  /** Role, term or leader changed. */
  role: (s: SoftState) => void;
  /** isQuorate() changed. */
  quorate: (quorate: boolean) => void;
  /** Entries up to index were applied. */
  applied: (index: number) => void;
  /** Storage failed: the member stopped (it must not go on without durability). */
  error: (err: Error) => void;
  /** The member finished recovering (HardState.recovering): it votes and counts toward commit again. */
  recovered: () => void;
  /**
   * The cluster's regular traffic has this process awake: its timer fired (a leader's heartbeats
   * are due), it sent due heartbeats from an input, or a leader's heartbeat came in. Periodic work
   * can run now rather than wake the process again (docs/cluster-member.md#timers).
   */
  heartbeat: () => void;
}

export interface Committed {
  readonly index: number;
  readonly term: number;
}

interface Waiter {
  term: number;
  resolve: (c: Committed) => void;
  reject: (e: Error) => void;
}

export class Replica extends EventEmitter<ReplicaEvents> {
  readonly id: string;
  /** The port the member listens on. */
  port = 0;
  private readonly core: RaftCore;
  private readonly waiters = new Map<number, Waiter>();
  private readonly clock: () => number;
  /** Aimed at the core's next deadline (armedAt); set once the transport listens. */
  private timer: ReplicaTimer | undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private readonly maxSleepMs: number;
  /** The last time this member is known to have run: an input handled or the timer fired. */
  private lastAwakeAt: number;
  private busy = false;
  private scheduled = false;
  private closed = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wasQuorate = false;
  private lastRole: Role = 'follower';
  private wasRecovering: RecoveryReason | null = null;
  /** Bytes of the entries applied since the last snapshot (paces compaction). */
  private logBytesSinceSnapshot = 0;
  /** Remembers the peak of the live bytes since the last snapshot: a drain defers the snapshot. */
  private readonly compactionPace = new CompactionPace();

  private constructor(
    private readonly opts: ReplicaOptions,
    private readonly storage: FileStorage,
    private readonly transport: ReplicaTransport,
    private readonly unsafe: UnsafeDriverFlags,
  ) {
    super();
    this.id = opts.id;
    this.clock = opts.clock ?? (() => performance.now());
    const init = storage.initialState();
    if (init.snapshot) opts.stateMachine.restore(init.snapshot);
    this.core = new RaftCore(
      {
        // a run's id must not repeat one of an earlier run of this member: the clock is the time
        // since the process started, which two runs can share, so it is drawn (never from
        // opts.raft.random, whose draws the simulation's seeds replay)
        incarnation: randomInt(1, 0x7fffffff),
        ...opts.raft,
        id: opts.id,
        members: Object.keys(opts.members),
      },
      init,
      this.clock(),
    );
    this.wasRecovering = this.core.recoveringReason;
    this.lastAwakeAt = this.clock();
    this.maxSleepMs = Math.max(MAX_SLEEP_MS, 2 * (opts.raft?.heartbeatInterval ?? 50));
  }

  /**
   * Recover the store, listen, connect to peers and start the timer. `seams` replace the TCP
   * transport and the timer (the deterministic simulation; replica-seams.ts).
   */
  static async start(opts: ReplicaOptions, seams: ReplicaSeams = {}): Promise<Replica> {
    const storage = await FileStorage.open({
      dir: opts.dataDir,
      ...(opts.quarantineDir !== undefined ? { quarantineDir: opts.quarantineDir } : {}),
      clusterId: opts.clusterId,
      memberId: opts.id,
      ...(opts.groupCommit !== undefined ? { groupCommit: opts.groupCommit } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.fs ? { fs: opts.fs } : {}),
    });
    let replica: Replica | undefined;
    const transport = (seams.transport ?? tcpTransportFor(opts))(
      (m) => replica?.onMessage(m),
      (peer) => replica?.onPeerLost(peer),
    );
    replica = new Replica(opts, storage, transport, seams.unsafe ?? {});
    replica.port = await transport.start();
    replica.startTimer(seams.timer ?? timeoutTimer);
    return replica;
  }

  // ---- state for the broker ----------------------------------------------------------------

  get role(): Role {
    return this.core.currentRole;
  }
  get term(): number {
    return this.core.currentTerm;
  }
  get leaderId(): string | null {
    return this.core.leaderId;
  }
  get commitIndex(): number {
    return this.core.commitIndex;
  }
  get appliedIndex(): number {
    return this.core.appliedIndex;
  }
  get lastIndex(): number {
    return this.core.log.lastIndex();
  }
  isLeader(): boolean {
    return this.core.isLeader();
  }
  /** Leader only: the highest index known replicated on `peer` (undefined on a follower). */
  matchIndexOf(peer: string): number | undefined {
    return this.core.matchIndexOf(peer);
  }

  /** Why this member still takes no part in votes or commits ('damaged' / 'blank'), or null. */
  get recovering(): RecoveryReason | null {
    return this.core.recoveringReason;
  }
  /** What recovery of the store found damaged (and where it put the files), if anything. */
  get storeDamage(): StoreDamage | undefined {
    return this.storage.damage;
  }
  /** See RaftCore.isQuorate: false means "stop serving clients now". */
  isQuorate(): boolean {
    return this.core.isQuorate(this.clock());
  }
  /** Leader, quorate, with an entry of its own term committed: its applied state is current. */
  canServeReads(): boolean {
    return this.core.canServeReads(this.clock());
  }
  /** fsync/write counters of the store. */
  get storageStats(): { fsyncs: number; writes: number; bytes: number } {
    return this.storage.stats;
  }

  /** Durations of the log's fsyncs. */
  get fsyncLatency(): LatencyHistogram {
    return this.storage.fsyncLatency;
  }

  /**
   * Replicate `data`. Resolves once it is committed (durable on a majority) and applied here.
   * Throws NotLeaderError at once on a follower, RecordTooLargeError when `data` would not fit in
   * one log record (log-records.ts); rejects with ProposalOutcomeError when the
   * outcome becomes unknown (leadership lost) or the entry was overwritten (`lost: true`).
   */
  propose(data: Uint8Array): Promise<Committed> {
    let pos: { index: number; term: number };
    try {
      pos = this.append(data);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<Committed>((resolve, reject) => {
      this.waiters.set(pos.index, { term: pos.term, resolve, reject });
    });
  }

  /**
   * Replicate `data` with nobody waiting here for its commit: for a caller that learns the
   * entry's fate from its own apply and from role changes (the cluster backend), and so need not
   * pay a promise, a waiter and a map entry per entry. Throws as `propose` rejects at once.
   */
  append(data: Uint8Array): { index: number; term: number } {
    if (this.closed) throw new ReplicationError('amqp:connection:forced', 'replica closed');
    if (!this.core.isLeader()) throw new NotLeaderError(this.core.leaderId);
    assertEntryFits(data); // never a record the log's reader would call damaged
    const pos = this.core.propose(data, this.clock());
    this.kick();
    return pos;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timer?.stop();
    await this.transport.close();
    await this.loopDone;
    await this.storage.close();
    this.failAll(false, 'replica closed');
  }

  // ---- driving the core --------------------------------------------------------------------

  private onMessage(m: Parameters<RaftCore['step']>[0]): void {
    if (this.closed) return;
    this.core.step(m, this.clock());
    this.kick();
    if (m.type === 'heartbeat') this.emit('heartbeat');
  }

  private onPeerLost(peer: string): void {
    if (this.closed) return;
    this.core.peerDisconnected(peer, this.clock());
    this.kick(); // the election deadline moved closer: the timer follows
  }

  // ---- the timer (docs/cluster-member.md#raft-timer) ---------------------------------------

  private startTimer(factory: TimerFactory): void {
    this.timer = factory(() => this.onTimer());
    this.arm(this.clock());
  }

  /**
   * Arm the timer for the core's next deadline (a leader's heartbeat or loss of its majority, an
   * election, a follower's lapse of leader contact), maxSleepMs at most. One ms late rather than
   * early: libuv counts whole ms, so a timer may fire up to a ms before the time asked for, and
   * one that finds its deadline not quite due costs a second wake-up.
   */
  private arm(now: number, at = this.wakeAt(now)): void {
    if (this.timer === undefined || this.closed) return;
    this.armedAt = at;
    this.timer.arm(Math.max(1, Math.ceil(at - now) + 1));
  }

  private wakeAt(now: number): number {
    return Math.min(this.core.nextDeadline(now), now + this.maxSleepMs);
  }

  /**
   * After inputs: arm again when they moved the wake-up time earlier (an election won, a new term,
   * the leader's connection lost), or later by a quarter of the cap or more (a follower that heard
   * its leader, a leader that sent its heartbeats from an input): a timer left armed would wake
   * the process for nothing. Smaller moves later are left to the timer, which finds nothing due
   * and sleeps again, rather than arming it anew on every input of a busy member.
   */
  private rearmIfMoved(now: number): void {
    const at = this.wakeAt(now);
    if (at < this.armedAt || at - this.armedAt >= this.maxSleepMs / 4) this.arm(now, at);
  }

  private onTimer(): void {
    if (this.closed) return;
    const now = this.clock();
    // A timer far later than armed means this process did not run (GC, CPU, a stop): the silence
    // of the peers since it last ran is its own, not theirs. It may have stopped right after that
    // moment, so that is where the pause starts (the timer's lateness alone would leave out the
    // time before its deadline); an input handled since the deadline (a long round of I/O
    // callbacks, not a stop) read what the peers sent.
    const unseen = now - this.lastAwakeAt;
    if (now - this.armedAt > STALL_MS && unseen > STALL_MS) {
      this.core.pause(unseen);
      this.opts.logger?.debug?.(
        { member: this.id, ms: Math.round(unseen) },
        'replication: this process did not run for a while (GC, CPU or a stop); peers not blamed for it',
      );
    }
    this.lastAwakeAt = now;
    this.core.tick(now);
    this.noteQuorate(now);
    this.arm(now);
    this.kick();
    this.emit('heartbeat');
  }

  private noteQuorate(now: number): void {
    const q = this.core.isQuorate(now);
    if (q !== this.wasQuorate) {
      this.wasQuorate = q;
      this.emit('quorate', q);
    }
  }

  /**
   * After a burst of inputs (one microtask later, so proposals of one turn batch together): send
   * the leader's appends at once (they need no fsync here), run the Ready loop if idle, and follow
   * the core's next deadline with the timer.
   */
  private kick(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (this.closed) return;
      const now = this.clock();
      this.lastAwakeAt = now;
      this.heartbeatIfDue(now);
      this.sendEagerMessages();
      if (!this.busy && this.core.hasReady()) this.loopDone = this.loop();
      this.noteQuorate(now);
      this.rearmIfMoved(now);
    });
  }

  /**
   * A leader's heartbeats go out from the timer; timers wait while the event loop works through
   * one long round of I/O callbacks (a window of client sends), and a leader silent for an
   * election timeout is replaced though it is busy, not gone (docs/cluster-member.md#fresh-start).
   * So every input also sends the heartbeats once they are due. Only while quorate as things
   * stand: the check-quorum step-down stays with the timer, which first discounts a stall of our
   * own (`pause`) and comes after the followers' queued answers were read.
   */
  private heartbeatIfDue(now: number): void {
    if (!this.core.isLeader()) return;
    if (now >= this.core.nextDeadline(now) && this.core.isQuorate(now)) {
      this.core.tick(now);
      this.emit('heartbeat');
    }
  }

  private async loop(): Promise<void> {
    this.busy = true;
    try {
      while (!this.closed && this.core.hasReady()) {
        // Entries proposed from an apply's continuation land after the last Ready and before a
        // kick queued behind this loop: their appends depend on no write, and held in the next
        // Ready until its write is durable they would reach a follower after the appends of later
        // entries, which go out at once: a gap, a rejection, the pipeline sent again.
        this.sendEagerMessages();
        await this.handle(this.core.takeReady());
      }
    } catch (err) {
      this.opts.logger?.error?.({ err }, 'replication: storage failed, stopping this member');
      this.emit('error', err as Error);
      void this.close();
    } finally {
      this.busy = false;
    }
  }

  /**
   * What the core says may go out now, before any pending write is durable (takeEagerMessages:
   * the leader's appends, heartbeats and snapshots, a follower's heartbeat answers), without the
   * answers a later one covers.
   */
  private sendEagerMessages(): void {
    for (const m of withoutSupersededAnswers(this.core.takeEagerMessages())) this.send(m);
  }

  private async handle(r: Ready): Promise<void> {
    // the messages answer for this Ready's writes (votes, acks): those are durable first
    // (docs/production.md#what-a-cluster-members-store-keeps-across-a-power-loss)
    // one answer per append taken: those a later one covers are left out (superseded-answers.ts)
    const messages = withoutSupersededAnswers(r.messages);
    if (this.unsafe.sendBeforePersist === true) for (const m of messages) this.send(m);
    const persistStart = this.clock();
    await this.storage.persist(r.persist);
    if (this.closed) return;
    this.notePersistTime(this.clock() - persistStart, r);
    if (this.unsafe.sendBeforePersist !== true) for (const m of messages) this.send(m);
    if (r.restoreSnapshot) {
      this.opts.stateMachine.restore(r.restoreSnapshot);
      this.logBytesSinceSnapshot = 0;
      for (const [index, w] of this.waiters) {
        if (index > r.restoreSnapshot.index) continue;
        this.waiters.delete(index);
        w.reject(new ProposalOutcomeError(index, w.term, false, 'replaced by a snapshot'));
      }
    }
    // indexed: a for-of in this async function made an iterator result per applied entry
    const apply = r.apply;
    for (let k = 0; k < apply.length; k++) this.applyEntry(apply[k]!);
    if (r.apply.length > 0) this.emit('applied', r.apply[r.apply.length - 1]!.index);
    if (r.truncatedFrom !== undefined) {
      for (const [index, w] of this.waiters) {
        if (index < r.truncatedFrom) continue;
        this.waiters.delete(index);
        w.reject(new ProposalOutcomeError(index, w.term, true, 'overwritten by a new leader'));
      }
    }
    if (r.softState) {
      if (this.lastRole === 'leader' && r.softState.role !== 'leader') this.failAll(false, 'leadership lost');
      this.lastRole = r.softState.role;
      this.emit('role', r.softState);
    }
    this.core.advance(r);
    const recovering = this.core.recoveringReason;
    if (this.wasRecovering !== null && recovering === null) {
      const fields = {
        member: this.id,
        was: this.wasRecovering,
        term: this.core.currentTerm,
        commit: this.core.commitIndex,
      };
      // A blank member lost nothing it can know of: a new cluster's members all start blank, and
      // one that missed the others' first election (or joins later) is caught up like this. Its
      // start was logged at info as a new store, so its end is too. Only a damaged store, which
      // the member logged at error, ends at warn.
      if (this.wasRecovering === 'blank' && this.core.commitIndex === 0)
        this.opts.logger?.info?.(fields, 'replication: a new cluster formed; this member votes');
      else if (this.wasRecovering === 'blank')
        this.opts.logger?.info?.(
          fields,
          'replication: joined the cluster (caught up from the leader); this member votes and counts toward commit',
        );
      else
        this.opts.logger?.warn?.(
          fields,
          'replication: recovery finished (caught up from the leader); this member votes and counts toward commit again',
        );
      this.emit('recovered');
    }
    this.wasRecovering = recovering;
    this.maybeCompact();
    // advancing may commit (leader): tell followers now rather than with the next heartbeat
    this.sendEagerMessages();
  }

  /**
   * A write that held this member's Ready loop: at debug from SLOW_PERSIST_DEBUG_MS, at warn from
   * SLOW_PERSIST_WARN_MS, since commits (and so every publisher's acknowledgement) waited for it.
   */
  private notePersistTime(ms: number, r: Ready): void {
    if (ms < SLOW_PERSIST_DEBUG_MS) return;
    const fields = {
      member: this.id,
      ms: Math.round(ms),
      entries: r.persist.entries.length,
      snapshot: r.persist.snapshot !== undefined,
    };
    if (ms >= SLOW_PERSIST_WARN_MS)
      this.opts.logger?.warn?.(fields, 'replication: the disk held a write; commits waited for it');
    else this.opts.logger?.debug?.(fields, 'replication: slow write');
  }

  private send(m: Message): void {
    if (m.type === 'snapshot')
      this.opts.logger?.debug?.(
        { member: this.id, to: m.to, index: m.snapshot.index },
        'replication: sending a snapshot (the peer is behind the compacted log)',
      );
    this.transport.send(m);
  }

  private applyEntry(e: Entry): void {
    this.opts.stateMachine.apply(e);
    this.logBytesSinceSnapshot += e.data?.length ?? 0;
    const w = this.waiters.get(e.index);
    if (!w) return;
    this.waiters.delete(e.index);
    if (w.term === e.term) w.resolve({ index: e.index, term: e.term });
    else
      w.reject(
        new ProposalOutcomeError(e.index, w.term, true, `index ${e.index} holds an entry of term ${e.term}`),
      );
  }

  private failAll(lost: boolean, reason: string): void {
    for (const [index, w] of this.waiters) w.reject(new ProposalOutcomeError(index, w.term, lost, reason));
    this.waiters.clear();
  }

  private maybeCompact(): void {
    const sm = this.opts.stateMachine;
    if (!sm.snapshot) return;
    const applied = this.core.appliedIndex;
    const due = raftCompactionDue(
      {
        entriesSince: applied - this.core.log.snapshotIndex,
        every: this.opts.snapshotEvery ?? 10_000,
        logBytes: this.logBytesSinceSnapshot,
        liveBytes: sm.liveBytes?.bind(sm),
        maxLogBytes: this.opts.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
      },
      this.compactionPace,
    );
    if (!due) return;
    const started = this.clock();
    if (this.core.isLeader()) {
      this.core.heartbeatNow(started);
      this.sendEagerMessages();
      this.transport.flushNow?.();
    }
    this.core.compact(applied, sm.snapshot());
    this.logBytesSinceSnapshot = 0;
    this.opts.logger?.debug?.(
      { member: this.id, index: applied, ms: Math.round(this.clock() - started) },
      'replication: log compacted',
    );
  }
}

/** The production transport: TCP to every member, with the handshake (and TLS) of the options. */
function tcpTransportFor(opts: ReplicaOptions): TransportFactory {
  return (onMessage, onPeerLost) => {
    const listen = opts.listen ?? opts.members[opts.id];
    if (!listen) throw new ReplicationError('amqp:invalid-field', `no address for member ${opts.id}`);
    return new TcpTransport({
      id: opts.id,
      clusterId: opts.clusterId,
      listen,
      peers: opts.members,
      codec: opts.codec ?? amqpWireCodec,
      onMessage,
      onPeerLost,
      ...(opts.secret ? { secret: opts.secret } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  };
}
