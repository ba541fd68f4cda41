/**
 * Replica's Ready loop (replica.ts): each Ready of the core handled in the required order:
 * persist (FileStorage, fsync) -> send -> apply (the StateMachine) -> advance, then compaction
 * when due; what may go out before any write is durable is sent first. A storage failure stops
 * the member.
 */
import { DEFAULT_MAX_LOG_BYTES, raftCompactionDue } from '../files/compaction-pace.js';
import { ProposalOutcomeError } from './errors.js';
import type { Entry, Message, Ready } from './raft/types.js';
import { ReplicaFields } from './replica-fields.js';
import { withoutSupersededAnswers } from './superseded-answers.js';

/** A write (append + fsync) that held the Ready loop this long is logged at debug... */
const SLOW_PERSIST_DEBUG_MS = 200;
/** ...and from this long at warn: every acknowledgement of the cluster waited on this disk. */
const SLOW_PERSIST_WARN_MS = 1_000;

export abstract class ReplicaReady extends ReplicaFields {
  /** Stops the member (replica.ts); the loop calls it when storage failed. */
  abstract close(): Promise<void>;

  protected async loop(): Promise<void> {
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
  protected sendEagerMessages(): void {
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

  protected failAll(lost: boolean, reason: string): void {
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
