import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { measureRate, median, rateInChild } from '../../bench/lib/isolated-rate.js';

const codecBench = fileURLToPath(new URL('../../bench/codec.ts', import.meta.url));

describe('median', () => {
  it('takes the middle of an odd count and the mean of the middle two of an even one', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 10])).toBe(3.5);
    expect(median([7])).toBe(7);
  });
});

describe('measureRate', () => {
  it('reports calls per second of wall time: a call that busy-waits 2 ms makes at most 500/s', () => {
    let calls = 0;
    const rate = measureRate(
      () => {
        calls++;
        const end = performance.now() + 2;
        while (performance.now() < end);
      },
      { warmupMs: 10, measureMs: 60 },
    );
    expect(rate.opsPerSec).toBeLessThanOrEqual(500);
    // a generous floor (a shared machine may stall the process): per second, not per millisecond
    expect(rate.opsPerSec).toBeGreaterThan(10);
    expect(rate.cpuUsPerOp).toBeGreaterThan(0);
    expect(rate.faultsPerOp).toBeGreaterThanOrEqual(0);
    expect(calls).toBeGreaterThan(0);
  });
});

describe('rateInChild', () => {
  it('measures one case of the codec bench in a process of its own', async () => {
    const rate = await rateInChild(codecBench, ['0', 'ours', '20', '50']);
    expect(rate.opsPerSec).toBeGreaterThan(0);
    expect(Number.isFinite(rate.cpuUsPerOp)).toBe(true);
    expect(rate.faultsPerOp).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('rejects with the child error when the case does not exist', async () => {
    await expect(rateInChild(codecBench, ['999', 'ours', '20', '50'])).rejects.toThrow(/no case 999 ours/);
  }, 60_000);
});
