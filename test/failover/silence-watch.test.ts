import { describe, expect, it } from 'vitest';
import { SilenceWatch } from '../../src/failover/index.js';

const opts = { minMs: 250, maxMs: 10_000, latencyMultiple: 4, probeMs: 250 };

// docs/failover.md#unresponsive (fake clock: plain numbers)
describe('SilenceWatch', () => {
  it('never suspects an idle connection, however long it is silent', () => {
    const w = new SilenceWatch(opts, 0);
    expect(w.check(60_000, false)).toBe('quiet');
    expect(w.nextCheckAt()).toBeUndefined();
  });

  it('work outstanding and silence past the floor: probe, then unresponsive past the probe deadline', () => {
    const w = new SilenceWatch(opts, 0);
    expect(w.check(1_000, true)).toBe('quiet'); // work starts now; the silence counts from here
    expect(w.nextCheckAt()).toBe(1_250);
    expect(w.check(1_249, true)).toBe('quiet');
    expect(w.check(1_250, true)).toBe('probe');
    expect(w.nextCheckAt()).toBe(1_500);
    expect(w.check(1_499, true)).toBe('quiet');
    expect(w.check(1_500, true)).toBe('unresponsive');
  });

  it('an answer to the probe clears the suspicion', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    expect(w.check(250, true)).toBe('probe');
    w.heard(260);
    expect(w.check(400, true)).toBe('quiet');
    expect(w.check(509, true)).toBe('quiet');
  });

  it('frames keep arriving: no suspicion while the work lasts', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    for (let t = 100; t <= 20_000; t += 100) {
      w.heard(t);
      expect(w.check(t + 50, true)).toBe('quiet');
    }
  });

  it('slow work (a commit waiting for fsyncs) is probed, not suspected: the answer comes at once', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    // each acknowledgement takes 700 ms; the member answers every probe within 5 ms
    for (let t = 0; t < 20_000; t += 700) {
      expect(w.check(t + 250, true)).toBe('probe');
      w.heard(t + 255);
      expect(w.check(t + 500, true)).toBe('quiet');
      w.heard(t + 700);
    }
    expect(w.probeDeadlineMs).toBe(250);
  });

  it('the probe deadline follows the slowest recent answer (a starved process) and decays back', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    expect(w.check(250, true)).toBe('probe');
    w.heard(450); // answered after 200 ms
    expect(w.probeDeadlineMs).toBe(800);
    expect(w.check(700, true)).toBe('probe');
    expect(w.check(1_400, true)).toBe('quiet'); // 700 ms after the probe: within 4 x 200 ms
    expect(w.check(1_500, true)).toBe('unresponsive');
    // many quick answers later the peak has halved a few times, down to the floor
    const v = new SilenceWatch(opts, 0);
    v.check(0, true);
    v.check(250, true);
    v.heard(450);
    let t = 450;
    for (let i = 0; i < 32 * 4; i++) {
      t += 300;
      expect(v.check(t, true)).toBe('probe');
      v.heard(t + 1);
    }
    expect(v.probeDeadlineMs).toBe(250);
  });

  it('silence plus probe deadline never above the idle timeout', () => {
    const w = new SilenceWatch({ ...opts, maxMs: 2_000 }, 0);
    w.check(0, true);
    w.check(250, true);
    w.heard(5_250); // a 5 s answer
    expect(w.probeDeadlineMs).toBe(1_750);
  });

  it('work that ends and starts again counts the silence from the new start', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, true);
    w.heard(10);
    expect(w.check(100, false)).toBe('quiet');
    expect(w.check(5_000, true)).toBe('quiet'); // idle 5 s before: not silence with work
    expect(w.check(5_249, true)).toBe('quiet');
    expect(w.check(5_250, true)).toBe('probe');
  });

  it('a peer that never answered a probe (RabbitMQ 3.10) is given the deadline on its next frame instead', () => {
    const w = new SilenceWatch(opts, 0);
    w.check(0, false, false);
    expect(w.check(0, true, false)).toBe('quiet');
    w.heard(300); // its acknowledgements take 300 ms
    expect(w.gapBoundMs).toBe(1_200);
    expect(w.check(550, true, false)).toBe('probe');
    // the probe is not answered, but that says nothing here: silent for 4 x 300 ms first
    expect(w.check(800, true, false)).toBe('quiet');
    expect(w.nextCheckAt(false)).toBe(1_500);
    expect(w.check(1_499, true, false)).toBe('quiet');
    expect(w.check(1_500, true, false)).toBe('unresponsive');
    // never below 4 x the floor, whatever it has shown
    expect(new SilenceWatch(opts, 0).gapBoundMs).toBe(1_000);
  });
});
