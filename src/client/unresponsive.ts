/**
 * The timer side of the silence watch (failover/silence-watch.ts, docs/failover.md#unresponsive)
 * on one physical connection: while the member owes us answers, check it when the watch says;
 * on suspicion send a probe (a session flow with `echo`, which the member must answer); past the
 * probe's deadline give the connection up with `quorate:unresponsive`, so failover moves on.
 */
import { ClientError } from '../errors.js';
import { type HeaderDeadlineOptions, SilenceWatch, type SilenceWatchOptions } from '../failover/index.js';
import type { ProtocolConnection } from '../protocol/index.js';

/**
 * Default silence (ms) before a member that owes us answers is probed, and the least time the
 * probe is given: the floor (docs/failover.md#unresponsive). A probe is one small frame,
 * so probing early costs nothing; only an unanswered probe leads to a failover.
 */
const DEFAULT_UNRESPONSIVE_TIMEOUT_MS = 250;
/** The probe deadline is this multiple of the largest recent probe answer (the member's liveness). */
const LATENCY_MULTIPLE = 4;
/** How soon after work starts the first look is taken, ms (work is noticed at the next look). */
const FIRST_LOOK_MS = 25;

/**
 * The suspicion's floor (`unresponsiveTimeoutMs`), or undefined when it is off: by default on when
 * the connection reconnects, off when it does not (there is no member to move to: a slow broker
 * would only end it, docs/failover.md#unresponsive). The one home of this rule: the silence watch
 * of each physical connection and the failover's first-byte deadline both follow it.
 */
export function unresponsiveFloorMs(
  configured: number | false | undefined,
  reconnects: boolean,
): number | undefined {
  const ms = configured ?? (reconnects ? DEFAULT_UNRESPONSIVE_TIMEOUT_MS : false);
  return ms || undefined;
}

/** The watch's settings for `unresponsiveTimeoutMs` (its floor) under an idle timeout. */
export function silenceWatchOptions(floorMs: number, idleTimeoutMs: number): SilenceWatchOptions {
  return {
    minMs: floorMs,
    // never slower than the idle timeout would be (0: none)
    maxMs: idleTimeoutMs > 0 ? Math.max(2 * floorMs, idleTimeoutMs) : Number.POSITIVE_INFINITY,
    latencyMultiple: LATENCY_MULTIPLE,
    probeMs: floorMs,
  };
}

/**
 * A member dialled during a failover is given this many `unresponsiveTimeoutMs` (1 s by default)
 * to send its first byte, at least (docs/failover.md#silent-member): the same margin a peer that
 * ignores probes gets (failover/silence-watch.ts), since a loaded host may starve a healthy
 * member's event loop for a few hundred ms.
 */
const FIRST_BYTE_FLOOR_MULTIPLE = 4;

/** The first-byte deadline's settings for `unresponsiveTimeoutMs` (its floor). */
export function headerDeadlineOptions(floorMs: number): HeaderDeadlineOptions {
  return { floorMs: FIRST_BYTE_FLOOR_MULTIPLE * floorMs, latencyMultiple: LATENCY_MULTIPLE };
}

/** True for the error a connection is given up with when its member stopped answering. */
export function isUnresponsive(e: unknown): boolean {
  return e instanceof ClientError && e.condition === 'quorate:unresponsive';
}

export interface GuardedConnection {
  readonly engine: Pick<ProtocolConnection, 'awaitingPeer' | 'probe' | 'answersProbes'>;
  readonly url: string;
  /** Write what the probe produced. */
  pump(): void;
  /** Give the connection up (no Close handshake: the member does not answer). */
  destroy(error: Error): void;
}

export class UnresponsiveGuard {
  private readonly watch: SilenceWatch;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  /** whether the member was asked once, early, if it answers probes at all */
  private askedWhetherItAnswers = false;
  /** Asks by Begin a member that left the early echo unanswered (see `askByBegin`). */
  private beginCheck: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly conn: GuardedConnection,
    private readonly options: SilenceWatchOptions,
    private readonly clock: () => number,
  ) {
    this.watch = new SilenceWatch(options, clock());
  }

  /** Bytes arrived from the member. */
  heard(at: number): void {
    this.watch.heard(at);
  }

  /** Something was written (work may have started): make sure a look is scheduled. */
  arm(): void {
    if (this.stopped) return;
    // learn at the start whether this peer answers probes (RabbitMQ 3.10 does not): only then
    // may an unanswered probe count as a hang (docs/failover.md#unresponsive)
    if (!this.askedWhetherItAnswers && this.conn.engine.probe(true)) {
      this.askedWhetherItAnswers = true;
      this.conn.pump();
      this.beginCheck = setTimeout(this.askByBegin, this.options.probeMs);
      this.beginCheck.unref?.();
    }
    if (this.timer) return;
    this.schedule(this.clock() + FIRST_LOOK_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.beginCheck) clearTimeout(this.beginCheck);
    this.beginCheck = undefined;
  }

  /**
   * A member that has not answered the early echo (RabbitMQ 3.10 ignores `echo`) is asked once
   * more, by a Begin it must answer, while it is healthy: once it has answered one, a later
   * unanswered probe means a hang, and a stopped member is given up after the probe deadline
   * instead of the longer bound on its next frame (docs/failover.md#unresponsive).
   */
  private readonly askByBegin = (): void => {
    this.beginCheck = undefined;
    if (this.stopped || this.conn.engine.answersProbes) return;
    if (this.conn.engine.probe()) this.conn.pump();
  };

  private schedule(at: number): void {
    this.timer = setTimeout(this.look, Math.max(1, Math.ceil(at - this.clock())));
    this.timer.unref?.();
  }

  private readonly look = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    const now = this.clock();
    const silentMs = this.watch.silentFor(now);
    const answersProbes = this.conn.engine.answersProbes;
    const verdict = this.watch.check(now, this.conn.engine.awaitingPeer(), answersProbes);
    if (verdict === 'unresponsive') {
      this.stop();
      this.conn.destroy(
        new ClientError(
          'quorate:unresponsive',
          `${this.conn.url} sent nothing for ${Math.round(silentMs)} ms while it owed answers, nor answered a probe`,
        ),
      );
      return;
    }
    if (verdict === 'probe') {
      // no session to ask on: the probe deadline alone decides
      if (this.conn.engine.probe()) this.conn.pump();
    }
    const next = this.watch.nextCheckAt(answersProbes);
    if (next !== undefined) this.schedule(next);
  };
}
