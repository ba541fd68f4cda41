import { describe, expect, it } from 'vitest';
import { formatThreadCost, threadCostSince, threadMark } from '../../bench/lib/thread-cpu.js';

describe('thread-cpu (receive-cpu --threads)', () => {
  it('puts CPU spent on the main thread under main, per message', () => {
    const from = threadMark();
    // 60 ms of work on this thread: six 10 ms ticks at least
    const until = process.cpuUsage().user + 60_000;
    let x = 0;
    while (process.cpuUsage().user < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    const cost = threadCostSince(from, 10);
    // 60 ms over 10 messages: at least ~5,000 us a message on main (ticks are sampled)
    expect(cost.main.userUs + cost.main.sysUs).toBeGreaterThanOrEqual(4_000);
    expect(cost.main.userUs + cost.main.sysUs).toBeGreaterThan(cost.others.userUs + cost.others.sysUs);
    expect(formatThreadCost(cost)).toMatch(
      /^\d+ msg\/s; main u [\d.]+ s [\d.]+ vcs [\d.]+ w [\d.]+ pf [\d.]+; others /,
    );
  });

  it('counts the page faults of fresh memory touched on the main thread', () => {
    const from = threadMark();
    // 16 MiB written for the first time: each page (or huge page) faults once
    const fresh = Buffer.allocUnsafeSlow(16 << 20);
    fresh.fill(1);
    expect(fresh[fresh.length - 1]).toBe(1);
    const cost = threadCostSince(from, 1);
    expect(cost.main.faults).toBeGreaterThanOrEqual(1);
  });

  it('counts this process read syscalls and bytes', async () => {
    const { readFileSync } = await import('node:fs');
    const from = threadMark();
    for (let i = 0; i < 20; i++) readFileSync('/proc/self/stat');
    const cost = threadCostSince(from, 1);
    // 20 files read, at least one read syscall each
    expect(cost.reads).toBeGreaterThanOrEqual(20);
    expect(cost.bytesPerRead).toBeGreaterThan(0);
  });
});
