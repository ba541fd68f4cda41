/**
 * How many messages a source paced at `rate` msg/s may hand out at a tick: what the time since the
 * last tick earned, within the credit the receiver gave. What credit held back is not saved up past
 * one tick's worth, so a credit stall is never followed by a burst above the pace.
 */
export class PacedRelease {
  /** messages earned but not yet released (fractional between ticks) */
  private owed = 0;
  private last: number;

  /** `rate`: msg/s (Infinity: as fast as credit allows); `tickMs`: how often `take` is called. */
  constructor(
    private readonly rate: number,
    private readonly tickMs: number,
    now: number,
  ) {
    this.last = now;
  }

  /** How many to release at `now` (ms) when the receiver's credit allows `available` more. */
  take(now: number, available: number): number {
    if (!Number.isFinite(this.rate)) return Math.max(0, available);
    this.owed += (this.rate * (now - this.last)) / 1000;
    this.last = now;
    const count = Math.max(0, Math.min(Math.floor(this.owed), available));
    this.owed = Math.min(this.owed - count, Math.max(1, (this.rate * this.tickMs) / 1000));
    return count;
  }
}
