import { describe, expect, it } from 'vitest';
import { HeaderDeadline } from '../../src/failover/index.js';

describe('HeaderDeadline', () => {
  it('is the floor until a member answered slowly, then a multiple of that, capped', () => {
    const d = new HeaderDeadline({ floorMs: 1_000, latencyMultiple: 4 });
    expect(d.deadlineMs(10_000)).toBe(1_000);
    d.observe(5);
    expect(d.deadlineMs(10_000)).toBe(1_000);
    d.observe(400);
    expect(d.deadlineMs(10_000)).toBe(1_600);
    expect(d.deadlineMs(1_200)).toBe(1_200);
  });

  it('forgets a slow answer gradually: half of it after 16 fast ones', () => {
    const d = new HeaderDeadline({ floorMs: 100, latencyMultiple: 4 });
    d.observe(1_000);
    for (let i = 0; i < 16; i++) d.observe(1);
    expect(d.deadlineMs(100_000)).toBeCloseTo(2_000, 0);
  });
});
