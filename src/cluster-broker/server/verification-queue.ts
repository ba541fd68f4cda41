/**
 * Admission to the password checks (scrypt on libuv's pool, which also runs our fsyncs): a few
 * run at once, a bounded number wait, and a waiting check whose client has gone is dropped before
 * it costs anything. Without these bounds a flood of logins from clients that leave at once
 * queues work that runs long after them, and every later login waits behind it
 * (docs/security.md#authentication).
 */

/** How a request for a slot ended. */
export type SlotOutcome = 'granted' | 'busy' | 'gone';

/** The bounds; every field is optional. */
export interface VerificationQueueOptions {
  /** Checks running at once. Default 2. */
  running?: number;
  /** Checks waiting at most, over all sources; more are refused at once. Default 64. */
  maxWaiting?: number;
  /** Checks waiting at most from one source address. Default 8. */
  maxWaitingPerAddress?: number;
}

interface Waiter {
  address: string;
  grant: (outcome: SlotOutcome) => void;
}

export class VerificationQueue {
  private readonly maxRunning: number;
  private readonly maxWaiting: number;
  private readonly maxPerAddress: number;
  private running = 0;
  private readonly waiting = new Set<Waiter>();
  private readonly waitingByAddress = new Map<string, number>();

  constructor(o: VerificationQueueOptions = {}) {
    this.maxRunning = o.running ?? 2;
    this.maxWaiting = o.maxWaiting ?? 64;
    this.maxPerAddress = o.maxWaitingPerAddress ?? 8;
  }

  /** Checks waiting now (for tests and logs). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * Resolves 'granted' when the caller may run one check (it must call `release()` after),
   * 'busy' at once when too many wait, 'gone' as soon as `gone` aborts while it waits.
   */
  acquire(address: string, gone?: AbortSignal): Promise<SlotOutcome> {
    if (gone?.aborted) return Promise.resolve('gone');
    if (this.running < this.maxRunning) {
      this.running++;
      return Promise.resolve('granted');
    }
    const fromAddress = this.waitingByAddress.get(address) ?? 0;
    if (this.waiting.size >= this.maxWaiting || fromAddress >= this.maxPerAddress) {
      return Promise.resolve('busy');
    }
    return new Promise((resolve) => {
      const onGone = (): void => {
        this.leave(waiter);
        resolve('gone');
      };
      const waiter: Waiter = {
        address,
        grant: (outcome) => {
          gone?.removeEventListener('abort', onGone);
          resolve(outcome);
        },
      };
      this.waiting.add(waiter);
      this.waitingByAddress.set(address, fromAddress + 1);
      gone?.addEventListener('abort', onGone, { once: true });
    });
  }

  /** One granted check finished: its slot goes to the longest waiting one. */
  release(): void {
    const next = this.waiting.values().next();
    if (next.done) {
      this.running--;
      return;
    }
    this.leave(next.value);
    next.value.grant('granted');
  }

  private leave(w: Waiter): void {
    if (!this.waiting.delete(w)) return;
    const n = (this.waitingByAddress.get(w.address) ?? 1) - 1;
    if (n <= 0) this.waitingByAddress.delete(w.address);
    else this.waitingByAddress.set(w.address, n);
  }
}
