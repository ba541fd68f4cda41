/**
 * Seedable randomness. Everything that is random (failover member order and jitter, a lossy
 * link's fault schedule) takes a `Random` (a function returning a float in [0, 1)) so tests and
 * deterministic simulations can replay a run from its seed; production passes `Math.random`.
 */
export type Random = () => number;

/** mulberry32: a small, fast, seedable PRNG (32-bit state). Good enough for jitter and shuffles. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n). */
export function randomIndex(random: Random, n: number): number {
  const i = Math.floor(random() * n);
  return Math.min(n - 1, Math.max(0, i));
}

/** Fisher-Yates shuffle into a new array (the input is not modified). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    const tmp = out[i]!;
    out[i] = out[j]!;
    out[j] = tmp;
  }
  return out;
}
