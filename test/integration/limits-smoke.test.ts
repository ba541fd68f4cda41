/**
 * CI smoke of `npm run limits`: the same scenario at 1/20 scale (50 connections, 500 links, a
 * queue of 50,000 1 KiB messages) against a real broker process: it stays responsive, within its
 * memory budget, and stops cleanly.
 */
import { describe, expect, it } from 'vitest';
import { runLimits } from '../limits/limits.js';

describe('limits under load (1/20 smoke)', () => {
  it('holds the connections, links and deep queue while staying responsive and within memory', async () => {
    const s = await runLimits({ scale: 0.05 });
    process.stdout.write(`${JSON.stringify(s)}\n`);
    expect(s.connections.open).toBe(50);
    expect(s.links.attached).toBe(500);
    expect(s.queue.messages).toBe(50_000);
    expect(s.exitCode).toBe(0);
    expect(s.responsive).toBe(true);
    expect(s.brokerMemoryMiB.peak).toBeLessThanOrEqual(s.brokerMemoryMiB.budget);
    expect(s.ok).toBe(true);
  }, 300_000);
});
