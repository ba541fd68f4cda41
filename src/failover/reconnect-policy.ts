/**
 * Reconnect policy: randomized exponential backoff with limits by attempts and by total time.
 *
 * Pure: given how many attempts failed since the connection was lost, when that started, and
 * the time now, it says how long to wait and which server to try, or that we are exhausted.
 * The option names are p-retry's, and the delay formula is p-retry's
 * (`round(rand * minTimeout * factor^(n-1))` capped at maxTimeout, rand in [1, 1 + jitter)),
 * so `toPRetryOptions()` can drive p-retry with the same schedule; `jitter` (0..1) generalizes
 * p-retry's boolean `randomize` (which is jitter 1).
 */

import type { Random } from '../common/random.js';
import { AmqpError } from '../errors.js';
import type { ServerAddress } from './server-address.js';
import type { ServerPool } from './server-pool.js';

export interface ReconnectOptions {
  /** retries after the first attempt (p-retry `retries`), default Infinity */
  retries?: number;
  /** growth per failed attempt, default 2 */
  factor?: number;
  /** delay before the first retry (ms), default 100 */
  minTimeout?: number;
  /** cap on one delay (ms), default 10000 */
  maxTimeout?: number;
  /** multiply delays by a random factor in [1, 2) (p-retry), default true */
  randomize?: boolean;
  /** random extra fraction in [0, jitter); overrides `randomize` (true = 1, false = 0) */
  jitter?: number;
  /** give up this long after the connection was lost (ms), default Infinity */
  maxRetryTime?: number;
  /** [0, 1) generator for the jitter, default Math.random */
  random?: Random;
}

/** The subset of p-retry's options this policy maps to. */
export interface PRetryOptionsShape {
  retries: number;
  factor: number;
  minTimeout: number;
  maxTimeout: number;
  randomize: boolean;
  maxRetryTime: number;
}

export interface ReconnectHistory {
  /** attempts that failed since the connection was lost (0 before the first attempt) */
  failures: number;
  /** when the connection was lost (same clock as `now`) */
  startedAt: number;
}

export type ReconnectDecision<O = unknown> =
  | { kind: 'attempt'; delayMs: number; server: ServerAddress<O>; attempt: number }
  | { kind: 'exhausted'; reason: 'attempts' | 'time'; attempts: number; elapsedMs: number };

export class ReconnectPolicy {
  readonly retries: number;
  readonly factor: number;
  readonly minTimeout: number;
  readonly maxTimeout: number;
  readonly jitter: number;
  readonly maxRetryTime: number;
  private readonly random: Random;

  constructor(options: ReconnectOptions = {}) {
    this.retries = options.retries ?? Number.POSITIVE_INFINITY;
    this.factor = options.factor ?? 2;
    this.minTimeout = options.minTimeout ?? 100;
    this.maxTimeout = options.maxTimeout ?? 10_000;
    this.jitter = options.jitter ?? (options.randomize === false ? 0 : 1);
    this.maxRetryTime = options.maxRetryTime ?? Number.POSITIVE_INFINITY;
    this.random = options.random ?? Math.random;
    const bad = (name: string, v: number, allowInf = false) =>
      Number.isNaN(v) || v < 0 || (!allowInf && !Number.isFinite(v))
        ? new AmqpError(
            'amqp:invalid-field',
            `reconnect option ${name} must be a non-negative number, got ${v}`,
          )
        : undefined;
    const error =
      bad('retries', this.retries, true) ??
      bad('factor', this.factor) ??
      bad('minTimeout', this.minTimeout) ??
      bad('maxTimeout', this.maxTimeout, true) ??
      bad('jitter', this.jitter) ??
      bad('maxRetryTime', this.maxRetryTime, true);
    if (error !== undefined) throw error;
  }

  /** The options for p-retry that give the same schedule (jitter other than 0/1 is rounded). */
  toPRetryOptions(): PRetryOptionsShape {
    return {
      retries: this.retries,
      factor: this.factor,
      minTimeout: this.minTimeout,
      maxTimeout: this.maxTimeout,
      randomize: this.jitter >= 0.5,
      maxRetryTime: this.maxRetryTime,
    };
  }

  /**
   * Delay before the next attempt, after `failures` failed ones: 0 for the first attempt after a
   * loss (another member is probably up), then exponential with jitter, capped at maxTimeout.
   */
  delayFor(failures: number): number {
    if (failures <= 0) return 0;
    const rand = 1 + this.jitter * this.random();
    const d = Math.round(rand * this.minTimeout * this.factor ** (failures - 1));
    return Math.min(d, this.maxTimeout);
  }

  /**
   * p-retry-compatible give-up test: `attempt` is the 1-based number of the attempt that just
   * failed, `elapsedMs` the time since the first one. True when no retry is left.
   */
  shouldGiveUp(attempt: number, elapsedMs: number): boolean {
    return attempt > this.retries || elapsedMs >= this.maxRetryTime;
  }

  /** What to do next: wait `delayMs`, then dial `server`; or give up. Counts the attempt in the pool. */
  next<O>(history: ReconnectHistory, now: number, pool: ServerPool<O>): ReconnectDecision<O> {
    const elapsedMs = Math.max(0, now - history.startedAt);
    const attempts = history.failures;
    if (attempts > 0 && attempts > this.retries)
      return { kind: 'exhausted', reason: 'attempts', attempts, elapsedMs };
    if (elapsedMs >= this.maxRetryTime) return { kind: 'exhausted', reason: 'time', attempts, elapsedMs };
    const remaining = this.maxRetryTime - elapsedMs;
    const backoff = Math.min(this.delayFor(history.failures), remaining);
    const pick = pool.next(now + backoff);
    const delayMs = Math.max(backoff, pick.notBefore - now);
    if (delayMs > remaining) return { kind: 'exhausted', reason: 'time', attempts, elapsedMs };
    return { kind: 'attempt', delayMs, server: pick.server, attempt: history.failures + 1 };
  }
}
