/**
 * A full garbage collection of this process, on demand, for the benches that bill CPU to phases:
 * a phase that ends with a collection pays for the garbage it made, instead of leaving it to
 * whichever phase V8 next collects in (a send's old-generation garbage landed in the receive that
 * followed it: docs/benchmarks.md#receive-gc-debt).
 *
 * Works whether or not node was started with --expose-gc: the flag is set at run time and `gc`
 * read from a fresh context, which V8 gives the function once the flag is on.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function exposedGc(): () => void {
  const global = (globalThis as { gc?: () => void }).gc;
  if (typeof global === 'function') return global;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  if (typeof gc !== 'function') throw new Error('cannot expose V8 gc()');
  return gc as () => void;
}

/** Runs a full (mark-compact) collection of this process's heap, synchronously. */
export const collectGarbage: () => void = exposedGc();
