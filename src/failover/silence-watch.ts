/**
 * Suspicion from silence while work is outstanding (docs/failover.md#unresponsive): a member that
 * owes us something (acknowledgements of written sends, deliveries it said are waiting for the
 * credit we granted) and sends nothing at all for `minMs` is asked for an answer (a probe), and
 * given up on when the probe is not answered either.
 *
 * Two different waits, measured apart. The silence before a probe is the member's work: a commit
 * waits for a quorum and an fsync, and under load that takes hundreds of ms while the member runs
 * perfectly well. A probe costs one small frame, so it is sent at the floor and nothing is
 * learned from those gaps. The answer to a probe is the member's liveness: the peer's event loop
 * answers it at once unless the process is stopped or starved. So the deadline adapts to the
 * probes' own round trips: `latencyMultiple` times the largest recent one (a peak that halves every
 * `PEAK_HALF_LIFE_PROBES` answers), never below `probeMs`; silence plus deadline never above
 * `maxMs` (the idle timeout: the watch may only be quicker than it). A member whose process is
 * starved for 200 ms now and then (GC, a busy machine) raises its own deadline to 800 ms, and is
 * given up on only when it stays silent that long after being asked.
 *
 * A peer that has never answered a probe (RabbitMQ 3.10's AMQP 1.0 plugin ignores `echo`) tells
 * nothing by leaving one unanswered. There the deadline is on the next expected frame instead:
 * the silence must also reach `latencyMultiple` times the largest recent gap between its frames
 * while work was outstanding (a peak that halves every `PEAK_HALF_LIFE_GAPS` gaps), never below
 * `UNANSWERED_FLOOR_MULTIPLE` times `minMs`, never above `maxMs`; so its fsyncs and pauses under
 * load raise its own bound.
 *
 * Idle connections (nothing outstanding) are never suspected: they keep the negotiated idle
 * timeout. Plain state, no timers: `now` is a monotonic ms clock, the caller's.
 */

/** How long the largest recent probe answer is remembered: it halves every this many answers. */
const PEAK_HALF_LIFE_PROBES = 32;
const PEAK_DECAY = 0.5 ** (1 / PEAK_HALF_LIFE_PROBES);
/** How long the largest recent gap between frames is remembered (peers that ignore probes). */
const PEAK_HALF_LIFE_GAPS = 64;
const GAP_DECAY = 0.5 ** (1 / PEAK_HALF_LIFE_GAPS);
/** For a peer that ignores probes, the silence bound is never below this many `minMs`. */
const UNANSWERED_FLOOR_MULTIPLE = 4;

export interface SilenceWatchOptions {
  /** Silence with work outstanding before a probe, ms. */
  minMs: number;
  /** Silence plus probe deadline are never above this, ms (the idle timeout). */
  maxMs: number;
  /** The probe deadline is this multiple of the largest recent probe answer. */
  latencyMultiple: number;
  /** The least time a probe is given, ms. */
  probeMs: number;
}

/** What the caller should do now: nothing, send a probe, or give the member up. */
export type SilenceVerdict = 'quiet' | 'probe' | 'unresponsive';

export class SilenceWatch {
  private lastHeardAt: number;
  /** Since when work is outstanding (undefined: none). */
  private workSince: number | undefined;
  private probedAt: number | undefined;
  private peakAnswerMs = 0;
  private peakGapMs = 0;

  constructor(
    private readonly opts: SilenceWatchOptions,
    now: number,
  ) {
    this.lastHeardAt = now;
  }

  /** How long a probe is given now, ms. */
  get probeDeadlineMs(): number {
    const adaptive = this.peakAnswerMs * this.opts.latencyMultiple;
    const cap = Math.max(this.opts.probeMs, this.opts.maxMs - this.opts.minMs);
    return Math.min(cap, Math.max(this.opts.probeMs, adaptive));
  }

  /** The silence a peer that ignores probes is given, ms. */
  get gapBoundMs(): number {
    const adaptive = this.peakGapMs * this.opts.latencyMultiple;
    const floor = UNANSWERED_FLOOR_MULTIPLE * this.opts.minMs;
    return Math.min(Math.max(this.opts.maxMs, this.opts.minMs), Math.max(floor, adaptive));
  }

  /** Any frame arrived from the member (a heartbeat counts: the member runs). */
  heard(now: number): void {
    if (this.workSince !== undefined) {
      const gap = now - Math.max(this.lastHeardAt, this.workSince);
      this.peakGapMs = Math.max(gap, this.peakGapMs * GAP_DECAY);
    }
    // the first frame after a probe is the member's answer time: a sample of its liveness
    if (this.probedAt !== undefined)
      this.peakAnswerMs = Math.max(now - this.probedAt, this.peakAnswerMs * PEAK_DECAY);
    this.lastHeardAt = now;
    this.probedAt = undefined;
  }

  /**
   * Look at the member: `outstanding` says whether it owes us anything now; `answersProbes`
   * whether it has ever answered a probe (false: the deadline on the next frame decides).
   */
  check(now: number, outstanding: boolean, answersProbes = true): SilenceVerdict {
    if (!outstanding) {
      this.workSince = undefined;
      this.probedAt = undefined;
      return 'quiet';
    }
    this.workSince ??= now;
    if (this.probedAt !== undefined) {
      if (now - this.probedAt < this.probeDeadlineMs) return 'quiet';
      if (!answersProbes && this.silentFor(now) < this.gapBoundMs) return 'quiet';
      return 'unresponsive';
    }
    if (now - Math.max(this.lastHeardAt, this.workSince) < this.opts.minMs) return 'quiet';
    this.probedAt = now;
    return 'probe';
  }

  /** When check() may next say something new (undefined: nothing outstanding). */
  nextCheckAt(answersProbes = true): number | undefined {
    if (this.workSince === undefined) return undefined;
    if (this.probedAt !== undefined) {
      const probeDue = this.probedAt + this.probeDeadlineMs;
      if (answersProbes) return probeDue;
      return Math.max(probeDue, Math.max(this.lastHeardAt, this.workSince) + this.gapBoundMs);
    }
    return Math.max(this.lastHeardAt, this.workSince) + this.opts.minMs;
  }

  /** How long the member has been silent with work outstanding, ms (0 if none). */
  silentFor(now: number): number {
    return this.workSince === undefined ? 0 : now - Math.max(this.lastHeardAt, this.workSince);
  }
}
