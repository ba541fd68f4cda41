import { collectGarbage } from '../../bench/lib/full-gc.js';

/**
 * Whether every object behind `refs` is collected within `ms`: full collections, each in a new
 * job, until they are gone or the time is up (what is still referred to briefly, e.g. until a
 * peer's answer arrives, gets the time to let go).
 */
export async function collectedWithin(refs: WeakRef<object>[], ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    // a WeakRef's target is kept until the job that read it ends
    await new Promise((resolve) => setTimeout(resolve, 20));
    collectGarbage();
    if (refs.every((r) => r.deref() === undefined)) return true;
  }
  return false;
}
