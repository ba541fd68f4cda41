import { type Random, seededRandom } from '../../../../src/common/random.js';

/** The simulation's view of the seeded PRNG (mulberry32), so every run replays exactly from its seed. */
export class Rng {
  private readonly random: Random;

  constructor(seed: number) {
    // the seed is mixed and the first draws skipped so that nearby seeds start far apart
    this.random = seededRandom(seed ^ 0x9e3779b9);
    for (let i = 0; i < 4; i++) this.random();
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.random();
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  range(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}
