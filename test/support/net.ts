import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (the OS picks it; there is a small window before it is reused). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** How `waitFor` waits. */
export interface WaitForOptions {
  timeoutMs: number;
  /** What is awaited, for the timeout's message. */
  what: string;
  /** The poll interval (100 ms by default). */
  intervalMs?: number;
  /**
   * Also checks `cond` (synchronously) whenever the caller calls the `wake` it is given: for a
   * state that may hold only for a moment between two polls (a credit taken back at once).
   * What it returns is called once the wait ends, to unsubscribe.
   */
  wakeOn?: (wake: () => void) => () => void;
  /** The state at the timeout, appended to its message. */
  describe?: () => string;
}

/** Polls `cond` until it holds; rejects with a clear message after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, opts: WaitForOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let seen = false;
  let woken: (() => void) | undefined;
  const unsubscribe = opts.wakeOn?.(() => {
    if (seen) return;
    const held = cond();
    if (held === true) {
      seen = true;
      woken?.();
    }
  });
  try {
    for (;;) {
      if (seen || (await cond())) return;
      if (Date.now() > deadline) {
        const state = opts.describe ? `: ${opts.describe()}` : '';
        throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${state}`);
      }
      await new Promise<void>((r) => {
        const timer = setTimeout(r, opts.intervalMs ?? 100);
        woken = () => {
          clearTimeout(timer);
          r();
        };
      });
      woken = undefined;
    }
  } finally {
    unsubscribe?.();
  }
}
