/**
 * What CI runs of the simulation (sim.test.ts): the seeds that ever failed, and as many new seeds
 * as fit in a time budget from a start that changes with every commit, so that over many commits
 * the simulation covers far more seeds than any one run (as FoundationDB and TigerBeetle run
 * theirs). Every run prints its start and count; a failure replays with
 *   npm run sim -- --seed S --trace 400
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { UnsafeFlags } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { StoreLoss } from './sim-member.js';
import { runSeed, type SimOptions, type SimResult } from './simulation.js';

/** A seed that once failed, with the options it failed under. */
export interface RegressionSeed {
  readonly seed: number;
  readonly nodes: number;
  readonly losses?: readonly StoreLoss[];
  /** What it failed with, for the reader. */
  readonly failed: string;
  /** The broken rule (UnsafeFlags) that fails it again: proof the seed still plays the bug. */
  readonly caughtBy?: keyof UnsafeFlags;
  /**
   * Older rules, fixed since, that give the seed the timing it failed with (a later fix changed
   * how its run unfolds): it must pass with these alone, and fail with these and `caughtBy`.
   */
  readonly playsWith?: readonly (keyof UnsafeFlags)[];
  /**
   * The lock-step test file (from the repository root) that plays `caughtBy`'s bug now, for a
   * seed whose run a later change of the Replica's timing unfolds otherwise (the timer aimed at
   * the Raft core's next deadline changed every schedule): the seed must still pass, and that
   * file must still set the flag; it fails with it there, deterministically.
   */
  readonly playedBy?: string;
}

/** The flags `flags` names, all set. */
export function unsafeFlags(flags: readonly (keyof UnsafeFlags)[]): UnsafeFlags {
  return Object.fromEntries(flags.map((f) => [f, true])) as UnsafeFlags;
}

export function regressionSeeds(): RegressionSeed[] {
  const file = new URL('./regression-seeds.json', import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')) as RegressionSeed[];
}

export function regressionOptions(r: RegressionSeed): SimOptions {
  return { seed: r.seed, nodes: r.nodes, ...(r.losses ? { losses: r.losses } : {}) };
}

/** The member count of a seed, as `npm run sim` picks it (--nodes mixed). */
export const nodesFor = (seed: number): number => (seed % 2 === 0 ? 3 : 5);

/** Seeds of the watch run start above this, so they never replay the fixed ranges (1..). */
const WATCH_BASE = 1_000_000;
const WATCH_SPAN = 1_000_000_000;

/**
 * Where this run starts: SIM_START if set; else derived from the commit (`git rev-parse HEAD`),
 * so every commit runs new seeds; else (no git, no repository) the fixed WATCH_BASE + 1.
 */
export function watchStart(env: NodeJS.ProcessEnv = process.env): { start: number; from: string } {
  if (env.SIM_START !== undefined) return { start: Number(env.SIM_START), from: 'SIM_START' };
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return {
      start: WATCH_BASE + (Number.parseInt(head.slice(0, 8), 16) % WATCH_SPAN),
      from: `commit ${head.slice(0, 12)}`,
    };
  } catch {
    return { start: WATCH_BASE + 1, from: 'no git: the fixed start' };
  }
}

/** Run seeds from `start` until `budgetMs` of wall time is spent (at least one seed). */
export async function runForBudget(
  start: number,
  budgetMs: number,
  opts: Omit<SimOptions, 'seed' | 'nodes'> = {},
): Promise<SimResult[]> {
  const out: SimResult[] = [];
  const end = Date.now() + budgetMs;
  for (let seed = start; out.length === 0 || Date.now() < end; seed++)
    out.push(await runSeed({ ...opts, seed, nodes: nodesFor(seed) }));
  return out;
}
