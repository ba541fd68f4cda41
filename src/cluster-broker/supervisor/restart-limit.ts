/** When the supervisor stops restarting a member (see RestartPolicy.maxFailures). */
import { CONFIG_REFUSED_EXIT_CODE, type RestartPolicy } from './types.js';

/**
 * The "fails K times in T" rule (as systemd's StartLimitBurst/IntervalSec and rgmanager's
 * max_restarts/restart_expire_time): `fail(now)` records one failure and says whether the member
 * has now failed `maxFailures` times within `failureWindowMs`.
 */
export class RestartLimit {
  private failures: number[] = [];

  constructor(private readonly policy: Pick<RestartPolicy, 'maxFailures' | 'failureWindowMs'>) {}

  get count(): number {
    return this.failures.length;
  }

  fail(now: number): boolean {
    this.failures = [...this.failures.filter((t) => now - t < this.policy.failureWindowMs), now];
    return this.failures.length >= this.policy.maxFailures;
  }

  reset(): void {
    this.failures = [];
  }
}

/**
 * Why an unexpected exit ends automatic restarts, or undefined: the member refused its
 * configuration (exit 2), or it failed `maxFailures` times within `failureWindowMs` (recorded in
 * `limit`). Exits by SIGKILL/SIGTERM/SIGINT from outside are someone stopping it, not the member
 * failing; a SIGKILL after a ready timeout is the supervisor's verdict that it failed.
 */
export function giveUpReason(exit: {
  id: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  readyTimedOut: boolean;
  limit: RestartLimit;
  policy: Pick<RestartPolicy, 'maxFailures' | 'failureWindowMs'>;
  now: number;
}): string | undefined {
  const { id, code, signal, policy } = exit;
  if (code === CONFIG_REFUSED_EXIT_CODE) {
    return `member ${id} refused its configuration (exit code ${code}): restarting it cannot help`;
  }
  const stoppedFromOutside =
    !exit.readyTimedOut && (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT');
  if (stoppedFromOutside || !exit.limit.fail(exit.now)) return undefined;
  return `member ${id} failed ${policy.maxFailures} times within ${policy.failureWindowMs / 1000} s: not restarting it`;
}
