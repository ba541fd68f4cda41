/**
 * sharedInterval: jobs of one period run in one timer callback (one wake-up), and a process that
 * is awake anyway (runDueIntervals, a cluster member's heartbeats) runs them then instead
 * (docs/cluster-member.md#timers). Real timers, short runs, generous bounds.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { runDueIntervals, sharedInterval } from '../../src/common/shared-interval.js';
import { waitFor } from '../support/net.js';

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

it('runs the jobs of one period in one callback, however far apart they were added', async () => {
  let inCallback = false;
  const together: boolean[] = [];
  stops.push(
    sharedInterval(40, () => {
      inCallback = true;
      queueMicrotask(() => {
        inCallback = false;
      });
    }),
  );
  await sleep(17); // a setInterval added now would fire 17 ms after the first, for good
  stops.push(sharedInterval(40, () => together.push(inCallback)));
  await waitFor(() => together.length >= 3, {
    timeoutMs: 10_000,
    what: 'three rounds of the second job',
    intervalMs: 10,
  });
  expect(together.length).toBeGreaterThanOrEqual(3);
  expect(together.every((t) => t)).toBe(true);
});

it('rounds run from runDueIntervals once it is called regularly, whatever the phase', async () => {
  const fromCall = { yes: 0, no: 0 };
  let calling = false;
  const tally = () => {
    if (calling) fromCall.yes++;
    else fromCall.no++;
  };
  stops.push(sharedInterval(100, tally));
  stops.push(sharedInterval(1000, tally));
  await sleep(37); // out of phase with the timer's own rounds
  const awake = setInterval(() => {
    calling = true;
    runDueIntervals();
    calling = false;
  }, 100);
  try {
    await sleep(450); // the own timer may run a round or two before the calls take over
    fromCall.yes = 0;
    fromCall.no = 0;
    await sleep(1_600);
  } finally {
    clearInterval(awake);
  }
  // 16 rounds of 100 ms and one or two of 1 s, nearly all in the calls (a busy machine may delay
  // a call past a round's window now and then)
  expect(fromCall.yes).toBeGreaterThanOrEqual(12);
  expect(fromCall.no).toBeLessThanOrEqual(2);
  // and no round runs early twice: at most one per period
  expect(fromCall.yes + fromCall.no).toBeLessThanOrEqual(16 + 2 + 2);
});

it('runDueIntervals runs nothing that is not due', async () => {
  let runs = 0;
  stops.push(sharedInterval(200, () => runs++));
  // calls in the first half of the job's 200 ms period (a round may run at most 40 ms early): none
  // may run it. Bounded by the clock, not by a count of sleeps, which a busy machine stretches.
  const until = performance.now() + 100;
  while (performance.now() < until) {
    runDueIntervals();
    await sleep(10);
  }
  expect(runs).toBe(0);
});

it('stops the timer with the last job', async () => {
  let runs = 0;
  const stop = sharedInterval(20, () => runs++);
  await waitFor(() => runs > 0, { timeoutMs: 10_000, what: 'a first round', intervalMs: 5 });
  stop();
  stop(); // twice is harmless
  const after = runs;
  expect(after).toBeGreaterThan(0);
  // a stopped timer's round would have come within these four periods: none may
  await sleep(80);
  runDueIntervals();
  expect(runs).toBe(after);
});
