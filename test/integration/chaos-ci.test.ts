/**
 * The chaos suite's CI runs (issue 7.1): fixed seeds and fixed fault schedules against the
 * reference cluster, about three minutes in all. Each run: three producers and two consumers on
 * our client record a history while the nemesis runs its schedule; then heal, drain, and the
 * Jepsen total-queue checker must say valid with lost 0, unexpected 0, duplicated 0. Randomized,
 * longer runs are the soak: `npm run chaos -- --duration 600 ...` (README).
 */
import { expect, it } from 'vitest';
import { printableResult } from '../chaos/print-report.js';
import { runChaos } from '../chaos/run.js';
import type { ChaosOptions, ChaosReport } from '../chaos/run-types.js';
import type { NemesisStep } from '../chaos/schedule.js';

function expectPassed(report: ChaosReport): void {
  const r = report.result;
  const verdict = {
    valid: r.valid,
    'lost-count': r['lost-count'],
    'unexpected-count': r['unexpected-count'],
    'duplicated-count': r['duplicated-count'],
  };
  if (!report.passed)
    console.error(JSON.stringify({ result: printableResult(r), summary: report.summary }, null, 2));
  expect(verdict).toEqual({ valid: true, 'lost-count': 0, 'unexpected-count': 0, 'duplicated-count': 0 });
  expect(r['acknowledged-count']).toBeGreaterThan(500);
  expect(report.summary.drained).toBe(true);
  expect(report.summary.recovered).toBe(true);
  // every fault was really injected, and the cluster served again after each
  expect(report.summary.nemesis.filter((e) => e.skipped !== undefined)).toEqual([]);
  expect(report.summary.nemesis.every((e) => e.recovered === true)).toBe(true);
  expect(report.passed).toBe(true);
}

async function chaos(o: ChaosOptions, steps: NemesisStep[]): Promise<ChaosReport> {
  const report = await runChaos({ ...o, schedule: steps, log: () => undefined });
  expect(report.summary.nemesis.length).toBe(steps.length); // the schedule ran to its end
  return report;
}

it('3 members: kill -9, SIGSTOP and partitions of the member in use', async () => {
  const report = await chaos({ nodes: 3, seed: 101, durationMs: 40_000 }, [
    { fault: { kind: 'kill', victims: 'client' }, holdMs: 3_000, gapMs: 2_000 },
    { fault: { kind: 'pause', victims: 'client' }, holdMs: 4_000, gapMs: 2_000 },
    { fault: { kind: 'partition', groups: [['n1']], label: 'isolate n1' }, holdMs: 5_000, gapMs: 2_000 },
    { fault: { kind: 'kill', victims: ['n2'] }, holdMs: 2_000, gapMs: 1_000 },
  ]);
  expectPassed(report);
  expect(report.summary.failovers).toBeGreaterThan(0);
}, 300_000);

it('3 members: every member killed and restarted on its store, slow and lossy links', async () => {
  const report = await chaos({ nodes: 3, seed: 202, durationMs: 35_000 }, [
    { fault: { kind: 'restart-all' }, holdMs: 1_000, gapMs: 2_000 },
    { fault: { kind: 'slow', ms: 80 }, holdMs: 3_000, gapMs: 1_000 },
    { fault: { kind: 'lossy', p: 0.005 }, holdMs: 3_000, gapMs: 1_000 },
    { fault: { kind: 'restart-all' }, holdMs: 500, gapMs: 1_000 },
  ]);
  expectPassed(report);
}, 300_000);

it('5 members: ring, a minority cut off, two members killed', async () => {
  const report = await chaos({ nodes: 5, seed: 303, durationMs: 40_000, rate: 30 }, [
    { fault: { kind: 'ring' }, holdMs: 4_000, gapMs: 1_000 },
    {
      fault: {
        kind: 'partition',
        groups: [
          ['n1', 'n2'],
          ['n3', 'n4', 'n5'],
        ],
        label: 'minority n1,n2',
      },
      holdMs: 4_000,
      gapMs: 1_000,
    },
    { fault: { kind: 'kill', victims: ['n3', 'n4'] }, holdMs: 3_000, gapMs: 1_000 },
  ]);
  expectPassed(report);
}, 300_000);
