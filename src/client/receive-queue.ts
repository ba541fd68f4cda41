/**
 * A Receiver's deliveries received and not yet handed out, and the receive() callers waiting for
 * them, served in call order: a single receive() (and the async iterator) takes one delivery; a
 * batch receive({ max }) takes, once at least one is there, everything buffered up to `max`.
 *
 * The buffer is an array read from a moving head rather than shifted: a batch takes a run of
 * deliveries from the front, and Array.prototype.shift/splice on a window-sized buffer copy.
 *
 * A waiting batch is answered one microtask after the delivery that woke it, not at once: the
 * transfers of one socket read arrive in one synchronous run, so the batch then carries all of
 * them instead of just the first (answered at once, a waiting batch came back with one delivery
 * and the next call took the rest: twice the calls, promises and deadlines per message).
 *
 * A caller's `timeoutMs` is kept as a time on the queue's clock, and one timer serves every
 * waiting caller: a caller answered in time costs no timer of its own (a setTimeout and a
 * clearTimeout per call were most of what a batch receive cost where each read brings one
 * message).
 */
import { microtask } from '../common/microtask.js';
import { type Settle, timeoutError } from './deadline.js';

/** A caller's deadline: `expiresAt` on the queue's clock, from its `timeoutMs`. */
export interface TimedWait {
  expiresAt?: number;
  timeoutMs?: number;
}

/** A queued receive() of one delivery; `done` once the receiver ended cleanly. */
export type OneWaiter<D> = Settle<IteratorResult<D, undefined>> & TimedWait;

/** A queued receive({ max }); resolves with undefined once the receiver ended cleanly. */
export interface BatchWaiter<D> extends Settle<D[] | undefined>, TimedWait {
  readonly max: number;
}

export type ReceiveWaiter<D> = OneWaiter<D> | BatchWaiter<D>;

/**
 * Who the queue hands deliveries out through: an object with a method rather than a function of
 * its own, so the call is to one method shared by every receiver. Optimized code calling a
 * per-receiver closure holds that closure, and loses it (V8's "weak objects" deopt, then a
 * recompile) once the receiver is collected.
 */
export interface HandsOut<D> {
  handOut(d: D): D;
}

const isBatch = <D>(w: ReceiveWaiter<D>): w is BatchWaiter<D> => 'max' in w;
const isTimed = (w: TimedWait): boolean => w.expiresAt !== undefined;

export class ReceiveQueue<D> {
  private buffer: (D | undefined)[] = [];
  private head = 0;
  private waiters: ReceiveWaiter<D>[] = [];
  private serveQueued = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  // bound once: queueing the deferred answer allocates nothing
  private readonly serveWaiting = (): void => {
    this.serveQueued = false;
    while (this.waiters.length > 0 && this.length > 0) this.serve(this.left(this.waiters.shift()!));
  };
  /**
   * The timer fired: the callers whose deadline passed leave the line (compacted in place, order
   * kept) and are rejected; the timer is armed again for the earliest deadline left, if any.
   */
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock();
    const waiters = this.waiters;
    let expired: ReceiveWaiter<D>[] | undefined;
    let next = Number.POSITIVE_INFINITY;
    let kept = 0;
    for (const w of waiters) {
      const at = w.expiresAt;
      if (at !== undefined && at <= now) {
        if (expired === undefined) expired = [w];
        else expired.push(w);
        continue;
      }
      if (at !== undefined && at < next) next = at;
      waiters[kept++] = w;
    }
    waiters.length = kept;
    if (next !== Number.POSITIVE_INFINITY) this.armFor(next);
    if (expired) for (const w of expired) w.reject(timeoutError('receive', w.timeoutMs));
  };

  /**
   * `owner.handOut` runs for every delivery as it leaves the queue for the application; `clock`
   * (ms) measures the callers' deadlines.
   */
  constructor(
    private readonly owner: HandsOut<D>,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The deadline a caller with `timeoutMs` waits until (none when it is absent or not finite). */
  deadline(timeoutMs: number | undefined): TimedWait {
    if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return {};
    return { expiresAt: this.clock() + Math.max(0, timeoutMs), timeoutMs };
  }

  /** Deliveries buffered, not handed out. */
  get length(): number {
    return this.buffer.length - this.head;
  }

  /** A delivery arrived: buffer it, then serve the waiting callers (a batch: one microtask later). */
  push(d: D): void {
    this.buffer.push(d);
    const first = this.waiters[0];
    if (first === undefined) return;
    if (!isBatch(first)) {
      this.serveWaiting();
    } else if (!this.serveQueued) {
      this.serveQueued = true;
      microtask(this.serveWaiting);
    }
  }

  /**
   * Answer `w` from the buffer now; false (nothing done) when it must wait: the buffer is empty,
   * or earlier callers still wait (a batch whose answer is queued for the microtask).
   */
  serveNow(w: ReceiveWaiter<D>): boolean {
    if (this.length === 0 || this.waiters.length > 0) return false;
    this.serve(w);
    return true;
  }

  /** The next buffered delivery, handed out; undefined when it must wait (as serveNow()). */
  shift(): D | undefined {
    if (this.length === 0 || this.waiters.length > 0) return undefined;
    return this.owner.handOut(this.take());
  }

  /** Up to `max` buffered deliveries, handed out; undefined when it must wait (as serveNow()). */
  takeUpTo(max: number): D[] | undefined {
    if (this.length === 0 || this.waiters.length > 0) return undefined;
    return this.takeFront(max);
  }

  /**
   * Queue a caller until a delivery arrives (or it is taken back, or the queue ends); one with
   * `expiresAt` is rejected with the quorate:timeout error a Deadline gives once it passed.
   */
  wait(w: ReceiveWaiter<D>): void {
    this.waiters.push(w);
    if (w.expiresAt !== undefined) this.armFor(w.expiresAt);
  }

  /** A caller's deadline passed: it no longer waits. */
  cancel(w: ReceiveWaiter<D>): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.left(this.waiters.splice(i, 1)[0]!);
  }

  /**
   * The queue ends (its receiver closed or failed; nobody waits on it again): every waiting caller
   * ends, rejected with `error` or (undefined) done, and the timer is cleared. Left armed, it would
   * keep the queue's owner, the receiver with its dedup window, reachable until
   * the last caller's deadline (a minute after a receive({ timeoutMs: 60_000 })).
   */
  endWaiters(error: Error | undefined): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) this.left(w);
    for (const w of waiters) {
      if (error) w.reject(error);
      else this.endOne(w);
    }
  }

  /** Answer `w` as the queue's end: done (one), undefined (batch). */
  endOne(w: ReceiveWaiter<D>): void {
    if (isBatch(w)) w.resolve(undefined);
    else w.resolve({ done: true, value: undefined });
  }

  /** Drop every buffered delivery (not handed out); returns them. */
  clear(): D[] {
    const dropped = this.buffer.slice(this.head) as D[];
    this.buffer = [];
    this.head = 0;
    return dropped;
  }

  /**
   * `w` no longer waits: with no timed caller left, the timer keeps nothing alive (it stays armed,
   * so a caller answered in time costs no clearTimeout; firing, it finds nobody to expire).
   */
  private left(w: ReceiveWaiter<D>): ReceiveWaiter<D> {
    if (w.expiresAt !== undefined && !this.waiters.some(isTimed)) unref(this.timer);
    return w;
  }

  /** The timer fires by `at` (an earlier one is kept, and counts again while callers wait). */
  private armFor(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) {
      ref(this.timer);
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.expire, Math.max(0, at - this.clock()));
  }

  private serve(w: ReceiveWaiter<D>): void {
    if (!isBatch(w)) {
      w.resolve({ done: false, value: this.owner.handOut(this.take()) });
      return;
    }
    w.resolve(this.takeFront(w.max));
  }

  private takeFront(max: number): D[] {
    const n = Math.min(max, this.length);
    const out = new Array<D>(n);
    for (let i = 0; i < n; i++) out[i] = this.owner.handOut(this.take());
    return out;
  }

  /** The front delivery, removed (the caller checked the buffer is not empty). */
  private take(): D {
    const d = this.buffer[this.head] as D;
    this.buffer[this.head++] = undefined;
    if (this.head === this.buffer.length) {
      this.buffer.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
    return d;
  }
}

/** Node's timers can stop keeping the process alive; a browser's (numbers) need not. */
function ref(t: ReturnType<typeof setTimeout> | undefined): void {
  (t as { ref?: () => void } | undefined)?.ref?.();
}
function unref(t: ReturnType<typeof setTimeout> | undefined): void {
  (t as { unref?: () => void } | undefined)?.unref?.();
}
