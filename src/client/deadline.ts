/**
 * A per-call deadline and AbortSignal in one object: every async call of the client takes
 * `{ timeoutMs?, signal? }` and ends, at the latest, when either fires.
 */
import { ClientError } from '../errors.js';
import type { CallOptions } from './types.js';

export type DeadlineReason = 'timeout' | 'aborted';

export class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort: (() => void) | undefined;
  private done = false;

  /**
   * `onExpire` runs at most once, when the timeout passes or the signal aborts (synchronously,
   * inside the constructor, if it is already aborted: callers check `expired` after constructing).
   */
  constructor(
    opts: CallOptions | undefined,
    private readonly onExpire: (reason: DeadlineReason, error: ClientError) => void,
    what = 'operation',
  ) {
    const timeoutMs = opts?.timeoutMs;
    this.signal = opts?.signal;
    if (this.signal?.aborted) {
      this.done = true;
      onExpire('aborted', abortedError(what, this.signal.reason));
      return;
    }
    if (this.signal) {
      this.onAbort = () => this.fire('aborted', abortedError(what, this.signal?.reason));
      this.signal.addEventListener('abort', this.onAbort, { once: true });
    }
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      this.timer = setTimeout(
        () => this.fire('timeout', timeoutError(what, timeoutMs)),
        Math.max(0, timeoutMs),
      );
    }
  }

  get expired(): boolean {
    return this.done;
  }

  /** The call finished: stop the timer and the abort listener. */
  clear(): void {
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
  }

  private fire(reason: DeadlineReason, error: ClientError): void {
    if (this.done) return;
    this.clear();
    this.onExpire(reason, error);
  }
}

/** The error of a call `what` whose `timeoutMs` passed: one wording for every timed call of the client. */
export function timeoutError(what: string, timeoutMs: number | undefined): ClientError {
  return new ClientError('quorate:timeout', `${what} timed out after ${timeoutMs} ms`);
}

function abortedError(what: string, reason: unknown): ClientError {
  return new ClientError('quorate:aborted', `${what} aborted`, { cause: reason });
}

/** How a queued caller is answered. */
export interface Settle<R> {
  resolve(value: R): void;
  reject(error: Error): void;
}

/**
 * A caller queued until someone answers it, or until its deadline: `enqueue` queues the answer
 * handle (unless the deadline had already passed); at the deadline `dequeue` takes it back and
 * the promise rejects with the deadline's error.
 */
export function waitQueued<R>(
  options: CallOptions | undefined,
  what: string,
  enqueue: (settle: Settle<R>) => void,
  dequeue: (settle: Settle<R>) => void,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const settle: Settle<R> = {
      resolve: (value) => {
        deadline.clear();
        resolve(value);
      },
      reject: (e) => {
        deadline.clear();
        reject(e);
      },
    };
    const deadline = new Deadline(
      options,
      (_r, error) => {
        dequeue(settle);
        reject(error);
      },
      what,
    );
    if (!deadline.expired) enqueue(settle);
  });
}
