/**
 * The exponential backoff formula every retry loop of quorate shares (the client's not-quorate
 * hold-back, the cluster's reconnects to a member, the supervisor's restarts): each consecutive
 * failure multiplies the delay by `factor`, up to `maxMs`. Jitter, if any, is the caller's:
 * each loop spreads its retries its own way.
 */
export interface ExponentialBackoff {
  /** the delay after the first failure (ms) */
  initialMs: number;
  /** cap on one delay (ms) */
  maxMs: number;
  /** growth per consecutive failure */
  factor: number;
}

/** The delay after `failures` consecutive failures counted before this one (0 for the first). */
export function backoffDelay(backoff: ExponentialBackoff, failures: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** failures);
}
