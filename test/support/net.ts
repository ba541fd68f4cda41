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

/** Polls `cond` until it holds; rejects with a clear message after `timeoutMs`. */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  opts: { timeoutMs: number; what: string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
