/**
 * The ground floor of Replica (replica.ts): every field it is made of, in one place so the object
 * keeps one shape, and the constructor (the state machine restored from the store's snapshot, the
 * RaftCore built on what the store recovered). The class is a chain, one job per file: this, the
 * Ready loop (replica-ready.ts), the inputs and the timer (replica-inputs.ts) and the API
 * (replica.ts); a chain, not helpers, so the per-message paths stay plain method calls on one
 * object.
 */
import { randomInt } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { CompactionPace } from '../files/compaction-pace.js';
import type { FileStorage } from './file-storage.js';
import { RaftCore } from './raft/core.js';
import type { RecoveryReason, Role } from './raft/types.js';
import type { ReplicaTimer, ReplicaTransport, UnsafeDriverFlags } from './replica-seams.js';
import type { ReplicaEvents, ReplicaOptions, Waiter } from './replica-types.js';

/**
 * The timer sleeps until the core's next deadline, but never longer than this, or twice the
 * heartbeat interval if that is longer (a follower that hears its leader then never wakes for
 * it): a stall is measured from the last moment this member is known to have run (an input or
 * the timer), so this bounds how much idle time before a stall is counted as stalled
 * (docs/cluster-member.md#raft-timer).
 */
const MAX_SLEEP_MS = 100;

export abstract class ReplicaFields extends EventEmitter<ReplicaEvents> {
  readonly id: string;
  /** The port the member listens on. */
  port = 0;
  protected readonly core: RaftCore;
  protected readonly waiters = new Map<number, Waiter>();
  protected readonly clock: () => number;
  /** Aimed at the core's next deadline (armedAt); set once the transport listens. */
  protected timer: ReplicaTimer | undefined;
  protected armedAt = Number.POSITIVE_INFINITY;
  protected readonly maxSleepMs: number;
  /** The last time this member is known to have run: an input handled or the timer fired. */
  protected lastAwakeAt: number;
  protected busy = false;
  protected scheduled = false;
  protected closed = false;
  protected loopDone: Promise<void> = Promise.resolve();
  protected wasQuorate = false;
  protected lastRole: Role = 'follower';
  protected wasRecovering: RecoveryReason | null = null;
  /** Bytes of the entries applied since the last snapshot (paces compaction). */
  protected logBytesSinceSnapshot = 0;
  /** Remembers the peak of the live bytes since the last snapshot: a drain defers the snapshot. */
  protected readonly compactionPace = new CompactionPace();

  protected constructor(
    protected readonly opts: ReplicaOptions,
    protected readonly storage: FileStorage,
    protected readonly transport: ReplicaTransport,
    protected readonly unsafe: UnsafeDriverFlags,
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
}
