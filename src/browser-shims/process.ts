/**
 * The `process` of the browser build (docs/websocket.md#browser), injected where the client names
 * the global: no environment (so `QUORATE_LOG` is unset: silent unless a logger is given), and
 * `nextTick` as a microtask, the nearest a page has.
 */
export const process = {
  env: {} as Record<string, string | undefined>,
  nextTick(fn: (...args: unknown[]) => void, ...args: unknown[]): void {
    queueMicrotask(() => fn(...args));
  },
  stderr: { write: (_line: string): boolean => true },
};
