/**
 * The exponential backoff formula of the failover pool's not-quorate hold-back
 * (failover/server-pool.ts), the cluster's reconnects to a member (replication/tcp-transport.ts)
 * and the supervisor's restarts (supervisor/backoff.ts): each consecutive failure multiplies the
 * delay by `factor`, up to `maxMs`. Jitter, if any, is the caller's: each loop spreads its
 * retries its own way. The client's reconnect loop (client/reconnect.ts) is the one retry loop
 * that does not use it: its `ReconnectOptions` are p-retry's (minTimeout, factor, maxTimeout,
 * randomize) and p-retry computes those delays, randomization included.
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
