import fc from 'fast-check';
import { expect } from 'vitest';

/**
 * fast-check shrinks an array's length to its `size` (default "small": about 10 elements) whatever
 * `maxLength` says, so a property over "up to 120 events" silently tests 10. Properties that rely
 * on long histories use `size: 'max'`; this check keeps them honest: over `runs` samples the
 * longest array must reach at least `share` of `maxLength`.
 */
export function expectReachesLength<T>(
  arb: fc.Arbitrary<T[]>,
  maxLength: number,
  share = 0.9,
  runs = 300,
): void {
  const longest = Math.max(...fc.sample(arb, { numRuns: runs, seed: 1 }).map((a) => a.length));
  expect(longest).toBeGreaterThanOrEqual(Math.floor(maxLength * share));
}
