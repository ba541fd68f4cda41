/**
 * The timer side of the silence watch (failover/silence-watch.ts, docs/failover.md#unresponsive)
 * on one physical connection: while the member owes us answers, check it when the watch says;
 * on suspicion send a probe (a session flow with `echo`, which the member must answer); past the
 * probe's deadline give the connection up with `quorate:unresponsive`, so failover moves on.
 */
import { ClientError } from '../errors.js';
import { SilenceWatch, type SilenceWatchOptions } from '../failover/index.js';
import type { ProtocolConnection } from '../protocol/index.js';

/** Default least silence (ms) before a member that owes us answers is probed. */
export const DEFAULT_UNRESPONSIVE_TIMEOUT_MS = 500;
/** The silence bound is this multiple of the largest recent gap between the member's frames. */
const LATENCY_MULTIPLE = 4;
/** How soon after work starts the first look is taken, ms (work is noticed at the next look). */
const FIRST_LOOK_MS = 25;

/** The watch's settings for `unresponsiveTimeoutMs` (its floor) under an idle timeout. */
export function silenceWatchOptions(floorMs: number, idleTimeoutMs: number): SilenceWatchOptions {
  return {
    minMs: floorMs,
    // never slower than the idle timeout would be (0: none)
    maxMs: idleTimeoutMs > 0 ? Math.max(floorMs, idleTimeoutMs) : Number.POSITIVE_INFINITY,
    latencyMultiple: LATENCY_MULTIPLE,
    probeMs: Math.max(50, floorMs / 2),
  };
}

/** True for the error a connection is given up with when its member stopped answering. */
export function isUnresponsive(e: unknown): boolean {
  return e instanceof ClientError && e.condition === 'quorate:unresponsive';
}

export interface GuardedConnection {
  readonly engine: Pick<ProtocolConnection, 'awaitingPeer' | 'probe'>;
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

  constructor(
    private readonly conn: GuardedConnection,
    options: SilenceWatchOptions,
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
    if (this.stopped || this.timer) return;
    this.schedule(this.clock() + FIRST_LOOK_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(at: number): void {
    this.timer = setTimeout(this.look, Math.max(1, Math.ceil(at - this.clock())));
    this.timer.unref?.();
  }

  private readonly look = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    const now = this.clock();
    const silentMs = this.watch.silentFor(now);
    const verdict = this.watch.check(now, this.conn.engine.awaitingPeer());
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
    const next = this.watch.nextCheckAt();
    if (next !== undefined) this.schedule(next);
  };
}
