import { backoffDelay } from '../../common/backoff.js';
import type { RestartPolicy } from './types.js';

/**
 * Restart backoff of one member, as a resource manager does it: each consecutive crash doubles
 * the delay up to a cap; a member that stayed up `resetAfterMs` starts again from the first delay.
 */
export class RestartBackoff {
  private crashes = 0;

  constructor(
    private readonly policy: Pick<RestartPolicy, 'initialDelayMs' | 'maxDelayMs' | 'factor' | 'resetAfterMs'>,
  ) {}

  get consecutiveCrashes(): number {
    return this.crashes;
  }

  /** Records a crash; `upForMs` is how long the member had been ready (0 if never). */
  nextDelay(upForMs: number): number {
    if (upForMs >= this.policy.resetAfterMs) this.crashes = 0;
    const { initialDelayMs: initialMs, maxDelayMs: maxMs, factor } = this.policy;
    const delay = backoffDelay({ initialMs, maxMs, factor }, this.crashes);
    this.crashes++;
    return delay;
  }

  reset(): void {
    this.crashes = 0;
  }
}
