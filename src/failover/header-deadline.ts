/**
 * How long a dialled member is given to say its first byte (its AMQP or SASL protocol header)
 * during a failover (docs/failover.md#silent-member). A stopped or hung process still completes
 * TCP connects (the kernel accepts into its backlog) but never answers; without this the attempt
 * would wait its whole timeout (10 s) for Open. The header costs the peer no disk and no
 * consensus: its event loop answers ours as soon as it runs, so the wait is a measure of the
 * peer's liveness (plus the network's round trips), like a probe's answer
 * (failover/silence-watch.ts).
 *
 * The deadline: `latencyMultiple` times the slowest recent time to first byte (a peak that halves
 * every `PEAK_HALF_LIFE_DIALS` samples), never below `floorMs`, never above the attempt timeout.
 * A member far away or behind TLS raises its own deadline once it has been seen answering slowly.
 *
 * Plain state, no timers; times are ms on the caller's monotonic clock.
 */

/** How long the slowest recent first byte is remembered: it halves every this many samples. */
const PEAK_HALF_LIFE_DIALS = 16;
const PEAK_DECAY = 0.5 ** (1 / PEAK_HALF_LIFE_DIALS);

export interface HeaderDeadlineOptions {
  /** The least a member is given to answer, ms. */
  floorMs: number;
  /** The deadline is this multiple of the slowest recent first byte. */
  latencyMultiple: number;
}

export class HeaderDeadline {
  private peakMs = 0;

  constructor(private readonly opts: HeaderDeadlineOptions) {}

  /** A dialled member sent its first byte this long after the dial started. */
  observe(firstByteMs: number): void {
    this.peakMs = Math.max(firstByteMs, this.peakMs * PEAK_DECAY);
  }

  /** The time a dialled member is given for its first byte now, at most `capMs`. */
  deadlineMs(capMs: number): number {
    return Math.min(capMs, Math.max(this.opts.floorMs, this.peakMs * this.opts.latencyMultiple));
  }
}
