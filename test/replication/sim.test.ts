import { describe, expect, it } from 'vitest';
import { runSeed, type SimOptions, type SimResult } from './sim/simulation.js';

/** The seeds CI runs (the safe run and every catch-test below draw from this range). */
const CI_SEEDS = 2000;
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
    const r = await runSeed({ ...opts, seed, nodes: seed % 2 === 0 ? 3 : 5 });
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
  it('keeps every safety property and stays live over the CI seed range, damaged stores included', async () => {
    const results = await runRange(1, CI_SEEDS);
    const failures = results.filter((r) => !r.ok);
    expect(failures, report(failures)).toEqual([]);
    // the schedules must actually exercise elections, commits and damaged stores
    expect(results.reduce((n, r) => n + r.elections, 0)).toBeGreaterThan(CI_SEEDS);
    expect(results.reduce((n, r) => n + r.committed, 0)).toBeGreaterThan(CI_SEEDS * 10);
    expect(results.reduce((n, r) => n + r.corruptions, 0)).toBeGreaterThan(CI_SEEDS / 3);
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
