import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STORE_LOSSES } from './sim/sim-member.js';
import { runSeed, type SimOptions, type SimResult } from './sim/simulation.js';
import {
  nodesFor,
  regressionOptions,
  regressionSeeds,
  runForBudget,
  unsafeFlags,
  watchStart,
} from './sim/watch.js';

/** The range every catch-test below draws from. */
const CI_SEEDS = 2000;
/** Wall time for new seeds (SIM_BUDGET_S overrides; `npm run soak -- sim` runs the long ones). */
const BUDGET_MS = Number(process.env.SIM_BUDGET_S ?? 180) * 1000;
/** A bug must be caught by at least this many seeds of the range. */
const CATCHES = 3;

async function runRange(
  start: number,
  count: number,
  opts: Omit<SimOptions, 'seed'> = {},
  stopAfterFailures = Number.POSITIVE_INFINITY,
): Promise<SimResult[]> {
  const out: SimResult[] = [];
  let failures = 0;
  for (let seed = start; seed < start + count && failures < stopAfterFailures; seed++) {
    const r = await runSeed({ ...opts, seed, nodes: nodesFor(seed) });
    out.push(r);
    if (!r.ok) failures++;
  }
  return out;
}

function report(failures: SimResult[]): string {
  return failures
    .slice(0, 3)
    .map((f) => `seed ${f.seed}: ${f.error}\n${(f.trace ?? []).slice(-40).join('\n')}`)
    .join('\n\n');
}

/** How a caught bug must show: any failure, or a safety violation in particular. */
type Caught = 'failure' | 'safety';

/**
 * Bugs the checker must catch, in the Replica driver and in the Raft core. Committing entries of
 * earlier terms by counting (Raft figure 8) is caught by the seeds that play the figure-8
 * schedule (sim/figure8.ts), as a lost committed entry: 351 of the range (207 of the 216
 * three-member figure-8 seeds, 143 of the 213 five-member ones, and one seed of random faults).
 */
const BUGS: [string, Omit<SimOptions, 'seed'>, Caught][] = [
  [
    'a Replica that sends before its writes are durable',
    { unsafeDriver: { sendBeforePersist: true } },
    'failure',
  ],
  ['a vote granted without the up-to-date check', { unsafe: { skipUpToDateCheck: true } }, 'failure'],
  [
    'a member that votes and acknowledges as if its damaged store were intact',
    { unsafe: { ignoreRecovery: true } },
    'failure',
  ],
  [
    'a leader that commits entries of earlier terms by counting (Raft figure 8)',
    { unsafe: { commitOldTermsByCount: true } },
    'safety',
  ],
];

/**
 * The bug is caught by CATCHES seeds of the CI range: a safety or liveness violation, or the
 * core's own invariant check throwing (the safe run over the same seeds fails none of them).
 */
async function expectCaught(opts: Omit<SimOptions, 'seed'>, caught: Caught): Promise<void> {
  const results = await runRange(1, CI_SEEDS, opts, CATCHES);
  const failures = results.filter((r) => !r.ok);
  expect(failures.length, `caught by ${failures.length} of ${results.length} seeds`).toBe(CATCHES);
  expect(failures[0]!.trace!.length).toBeGreaterThan(10);
  if (caught === 'safety') for (const f of failures) expect(f.error).toMatch(/^safety: /);
}

describe('replication: deterministic simulation of real Replicas', () => {
  it(
    'keeps every safety property and stays live over the seeds that fit the budget, from a start of this commit',
    async () => {
      const { start, from } = watchStart();
      const results = await runForBudget(start, BUDGET_MS);
      const count = results.length;
      // printed, so that a failure can be replayed: npm run sim -- --seed S --trace 400
      console.info(
        `simulation: ${count} seeds from ${start} (${from}): npm run sim -- --start ${start} --seeds ${count}`,
      );
      const failures = results.filter((r) => !r.ok);
      expect(failures, report(failures)).toEqual([]);
      // the schedules must actually exercise elections, commits and damaged stores
      expect(results.reduce((n, r) => n + r.elections, 0)).toBeGreaterThan(count);
      expect(results.reduce((n, r) => n + r.committed, 0)).toBeGreaterThan(count * 10);
      // damaged stores are drawn per seed and split between flipped bytes and four kinds of loss:
      // about a third of the seeds get one (0.30-0.35 over runs of 300-1,700 seeds); a fifth is the
      // floor that says the faults still run without failing on an unlucky range
      expect(results.reduce((n, r) => n + r.corruptions, 0)).toBeGreaterThan(count / 5);
    },
    BUDGET_MS + 600_000,
  );

  it('passes every seed that ever failed (regression-seeds.json), and each still plays its bug (or its lock-step test does)', async () => {
    for (const r of regressionSeeds()) {
      const result = await runSeed(regressionOptions(r));
      expect(result.ok, `seed ${r.seed} (was: ${r.failed}): ${result.error}`).toBe(true);
      if (r.caughtBy === undefined) continue;
      if (r.playedBy !== undefined) {
        const lockstep = readFileSync(new URL(`../../../${r.playedBy}`, import.meta.url), 'utf8');
        expect(lockstep, `${r.playedBy} no longer sets ${r.caughtBy}`).toContain(`${r.caughtBy}: true`);
        continue;
      }
      const older = r.playsWith ?? [];
      if (older.length > 0) {
        const timing = await runSeed({ ...regressionOptions(r), unsafe: unsafeFlags(older) });
        expect(timing.ok, `seed ${r.seed} fails with ${older.join(', ')} alone: ${timing.error}`).toBe(true);
      }
      const broken = await runSeed({ ...regressionOptions(r), unsafe: unsafeFlags([...older, r.caughtBy]) });
      expect(broken.ok, `seed ${r.seed} no longer fails with ${[...older, r.caughtBy].join(', ')}`).toBe(
        false,
      );
    }
  }, 120_000);

  it('loses each kind of store state while another member is down, over the CI range', async () => {
    const seen: Record<string, number> = {};
    for (let seed = 1; seed <= CI_SEEDS && Object.keys(seen).length < STORE_LOSSES.length; seed++) {
      const r = await runSeed({ seed, nodes: nodesFor(seed) });
      for (const [k, v] of Object.entries(r.lossesWithAnotherDown)) seen[k] = (seen[k] ?? 0) + v;
    }
    expect(Object.keys(seen).sort()).toEqual([...STORE_LOSSES].sort());
  }, 600_000);

  it('replays a seed exactly', async () => {
    // 4242 has random faults; 3 plays the figure-8 schedule
    for (const seed of [4242, 3]) {
      const a = await runSeed({ seed, nodes: 5, trace: 100 });
      const b = await runSeed({ seed, nodes: 5, trace: 100 });
      expect(a.trace).toEqual(b.trace);
      expect(a.steps).toBe(b.steps);
    }
  });

  it.each(BUGS)('catches %s', async (_, bug, caught) => expectCaught(bug, caught), 300_000);
});
