/**
 * Suspicion from silence while work is outstanding (docs/failover.md#unresponsive): a member that
 * owes us something (acknowledgements of written sends, deliveries it said are waiting for the
 * credit we granted) and sends nothing at all for longer than it has recently taken is asked for
 * an answer (a probe), and given up on when the probe is not answered either.
 *
 * The bound adapts to what the member has shown: while work is outstanding, every gap between
 * two frames from it (or between the work starting and the first frame) is a sample; the bound
 * (gaps ended by our probe excepted) is `latencyMultiple` times the largest recent sample (a peak that halves every
 * `PEAK_HALF_LIFE_GAPS` samples), never below `minMs` and never above `maxMs` (the idle
 * timeout: the watch may only be quicker than it). A member whose fsyncs or GC pauses make it
 * pause 300 ms under load raises its own bound to well over a second before anything is suspected.
 *
 * Idle connections (nothing outstanding) are never suspected: they keep the negotiated idle
 * timeout. Plain state, no timers: `now` is a monotonic ms clock, the caller's.
 */

/** How long the largest recent gap is remembered: it halves every this many samples. */
const PEAK_HALF_LIFE_GAPS = 64;
const PEAK_DECAY = 0.5 ** (1 / PEAK_HALF_LIFE_GAPS);

export interface SilenceWatchOptions {
  /** The bound is never below this, ms. */
  minMs: number;
  /** The bound is never above this, ms (the idle timeout). */
  maxMs: number;
  /** The bound is this multiple of the largest recent gap. */
  latencyMultiple: number;
  /** After a probe, a frame must arrive within this, ms. */
  probeMs: number;
}

/** What the caller should do now: nothing, send a probe, or give the member up. */
export type SilenceVerdict = 'quiet' | 'probe' | 'unresponsive';

export class SilenceWatch {
  private lastHeardAt: number;
  /** Since when work is outstanding (undefined: none). */
  private workSince: number | undefined;
  private probedAt: number | undefined;
  private peakGapMs = 0;

  constructor(
    private readonly opts: SilenceWatchOptions,
    now: number,
  ) {
    this.lastHeardAt = now;
  }

  /** The silence (ms) that raises suspicion now. */
  get boundMs(): number {
    const adaptive = this.peakGapMs * this.opts.latencyMultiple;
    return Math.min(this.opts.maxMs, Math.max(this.opts.minMs, adaptive));
  }

  /** Any frame arrived from the member (a heartbeat counts: the member runs). */
  heard(now: number): void {
    // a gap our probe ended measures our asking, not the member's own answering: not a sample
    if (this.workSince !== undefined && this.probedAt === undefined) {
      const gap = now - Math.max(this.lastHeardAt, this.workSince);
      this.peakGapMs = Math.max(gap, this.peakGapMs * PEAK_DECAY);
    }
    this.lastHeardAt = now;
    this.probedAt = undefined;
  }

  /** Look at the member: `outstanding` says whether it owes us anything now. */
  check(now: number, outstanding: boolean): SilenceVerdict {
    if (!outstanding) {
      this.workSince = undefined;
      this.probedAt = undefined;
      return 'quiet';
    }
    this.workSince ??= now;
    if (this.probedAt !== undefined)
      return now - this.probedAt >= this.opts.probeMs ? 'unresponsive' : 'quiet';
    if (now - Math.max(this.lastHeardAt, this.workSince) < this.boundMs) return 'quiet';
    this.probedAt = now;
    return 'probe';
  }

  /** When check() may next say something new (undefined: nothing outstanding). */
  nextCheckAt(): number | undefined {
    if (this.workSince === undefined) return undefined;
    if (this.probedAt !== undefined) return this.probedAt + this.opts.probeMs;
    return Math.max(this.lastHeardAt, this.workSince) + this.boundMs;
  }

  /** How long the member has been silent with work outstanding, ms (0 if none). */
  silentFor(now: number): number {
    return this.workSince === undefined ? 0 : now - Math.max(this.lastHeardAt, this.workSince);
  }
}
