import { describe, expect, it } from 'vitest';
import { PacedRelease } from '../../bench/lib/paced-release.js';

describe('PacedRelease (bench/lib/paced-release.ts)', () => {
  it('hands out rate x elapsed time, carrying the fraction to the next tick', () => {
    const p = new PacedRelease(2500, 1, 0); // 2.5 messages per ms
    const counts = [1, 2, 3, 4].map((t) => p.take(t, 1000));
    expect(counts).toEqual([2, 3, 2, 3]);
  });

  it('never exceeds the credit, and does not burst above the pace after a credit stall', () => {
    const p = new PacedRelease(10_000, 1, 0); // 10 per ms
    expect(p.take(1, 4)).toBe(4);
    expect(p.take(50, 0)).toBe(0); // 49 ms without credit
    expect(p.take(51, 1000)).toBe(20); // one tick's worth saved up, plus this tick's
  });

  it('unpaced: whatever the credit allows', () => {
    const p = new PacedRelease(Number.POSITIVE_INFINITY, 1, 0);
    expect(p.take(0, 700)).toBe(700);
  });
});
