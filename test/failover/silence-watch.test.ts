import { describe, expect, it } from 'vitest';
import { SilenceWatch } from '../../src/failover/index.js';

const opts = { minMs: 500, maxMs: 10_000, latencyMultiple: 4, probeMs: 250 };

// docs/failover.md#unresponsive (fake clock: plain numbers)
describe('SilenceWatch', () => {
  it('never suspects an idle connection, however long it is silent', () => {
    const w = new SilenceWatch(opts, 0);
    expect(w.check(60_000, false)).toBe('quiet');
    expect(w.nextCheckAt()).toBeUndefined();
  });

  it('work outstanding and silence past the bound: probe, then unresponsive past the probe deadline', () => {
    const w = new SilenceWatch(opts, 0);
    expect(w.check(1_000, true)).toBe('quiet'); // work starts now; the silence counts from here
    expect(w.nextCheckAt()).toBe(1_500);
    expect(w.check(1_499, true)).toBe('quiet');
    expect(w.check(1_500, true)).toBe('probe');
    expect(w.nextCheckAt()).toBe(1_750);
    expect(w.check(1_749, true)).toBe('quiet');
    expect(w.check(1_750, true)).toBe('unresponsive');
  });

  it('an answer to the probe clears the suspicion', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    expect(w.check(500, true)).toBe('probe');
    w.heard(600);
    expect(w.check(800, true)).toBe('quiet');
    expect(w.check(1_000, true)).toBe('quiet');
    // the gap the probe ended is no sample: a slow but alive member does not raise the bound
    expect(w.boundMs).toBe(500);
  });

  it('frames keep arriving: no suspicion while the work lasts', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    for (let t = 100; t <= 20_000; t += 100) {
      w.heard(t);
      expect(w.check(t + 50, true)).toBe('quiet');
    }
  });

  it('the bound follows the longest recent gap (fsync or GC pauses) and decays back', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    w.heard(400); // a 400 ms pause with work outstanding
    expect(w.boundMs).toBe(1_600);
    expect(w.check(1_500, true)).toBe('quiet'); // 1.1 s silence: within 4 x 400 ms
    expect(w.check(2_000, true)).toBe('probe');
    // many quick answers later the peak has halved a few times, down to the floor
    for (let i = 1; i <= 64 * 4; i++) w.heard(2_000 + i * 10);
    expect(w.boundMs).toBe(500);
  });

  it('never above the idle timeout', () => {
    const w = new SilenceWatch({ ...opts, maxMs: 2_000 }, 0);
    w.check(0, true);
    w.heard(5_000);
    expect(w.boundMs).toBe(2_000);
  });

  it('work that ends and starts again counts the silence from the new start', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    w.heard(10);
    expect(w.check(100, false)).toBe('quiet');
    expect(w.check(5_000, true)).toBe('quiet'); // idle 5 s before: not silence with work
    expect(w.check(5_399, true)).toBe('quiet');
    w.heard(5_420);
    expect(w.boundMs).toBe(1_680); // the gap sampled is 420 ms (from the work's start), not 5.4 s
  });
});
