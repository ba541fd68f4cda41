/**
 * A fixed-bucket latency histogram (Prometheus layout: cumulative counts per upper bound, sum,
 * count), filled by the stores around each fsync and read by the `/metrics` endpoint. Recording
 * is a short loop over the bounds: cheap next to the fsync it measures.
 */

/** Upper bounds in seconds: 0.5 ms .. 5 s (an fsync on a busy disk can take seconds). */
export const FSYNC_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

export class LatencyHistogram {
  /** counts[i]: observations <= bounds[i] (not cumulative; the exporter sums). Last: above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[] = FSYNC_BUCKETS_SECONDS) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }

  /** Times `work` and records its duration (also when it throws). */
  async time<T>(work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.observe((performance.now() - start) / 1000);
    }
  }
}
