/**
 * What drives Replica's core (replica.ts): messages from peers, a peer's lost connection, and the
 * one timer aimed at the core's next deadline (docs/cluster-member.md#raft-timer); after a burst
 * of inputs, `kick` sends what may go out at once and starts the Ready loop (replica-ready.ts).
 */
import type { RaftCore } from './raft/core.js';
import { ReplicaReady } from './replica-ready.js';
import type { TimerFactory } from './replica-seams.js';

/** The timer firing this much later than armed means this process did not run meanwhile. */
const STALL_MS = 90;

export abstract class ReplicaInputs extends ReplicaReady {
  // ---- driving the core --------------------------------------------------------------------

  protected onMessage(m: Parameters<RaftCore['step']>[0]): void {
    if (this.closed) return;
    this.core.step(m, this.clock());
    this.kick();
    if (m.type === 'heartbeat') this.emit('heartbeat');
  }

  protected onPeerLost(peer: string): void {
    if (this.closed) return;
    this.core.peerDisconnected(peer, this.clock());
    this.kick(); // the election deadline moved closer: the timer follows
  }

  // ---- the timer (docs/cluster-member.md#raft-timer) ---------------------------------------

  protected startTimer(factory: TimerFactory): void {
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
  protected kick(): void {
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
}
