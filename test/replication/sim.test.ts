import { describe, expect, it } from 'vitest';
import { runSeed, type SimOptions, type SimResult } from './sim/simulation.js';

function runRange(start: number, count: number, opts: Omit<SimOptions, 'seed'> = {}): SimResult[] {
  const out: SimResult[] = [];
  for (let seed = start; seed < start + count; seed++) {
    out.push(runSeed({ ...opts, seed, nodes: seed % 2 === 0 ? 3 : 5 }));
  }
  return out;
}

function report(failures: SimResult[]): string {
  return failures
    .slice(0, 3)
    .map((f) => `seed ${f.seed}: ${f.error}\n${(f.trace ?? []).slice(-40).join('\n')}`)
    .join('\n\n');
}

describe('replication: deterministic simulation', () => {
  it('keeps every safety property and stays live over a fixed seed range', () => {
    const results = runRange(1, 2000);
    const failures = results.filter((r) => !r.ok);
    expect(failures, report(failures)).toEqual([]);
    // the schedules must actually exercise elections and commits
    expect(results.reduce((n, r) => n + r.elections, 0)).toBeGreaterThan(2000);
    expect(results.reduce((n, r) => n + r.committed, 0)).toBeGreaterThan(20_000);
  }, 180_000);

  it('replays a seed exactly', () => {
    const a = runSeed({ seed: 4242, nodes: 5, trace: 100 });
    const b = runSeed({ seed: 4242, nodes: 5, trace: 100 });
    expect(a.trace).toEqual(b.trace);
    expect(a.steps).toBe(b.steps);
  });

  it('catches a vote granted without the up-to-date check', () => {
    const failures = runRange(1, 200, { unsafe: { skipUpToDateCheck: true } }).filter((r) => !r.ok);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]!.error).toMatch(/^safety/);
    expect(failures[0]!.trace!.length).toBeGreaterThan(10);
  });

  it("flips bytes of stopped members' stores, and catches a member that acts on what it lost", () => {
    const safe = runRange(1, 300);
    expect(safe.filter((r) => !r.ok)).toEqual([]);
    expect(safe.reduce((n, r) => n + r.corruptions, 0)).toBeGreaterThan(100);
    // the same seeds with members that vote and acknowledge as if their store were intact
    const failures = runRange(1, 300, { unsafe: { ignoreRecovery: true } }).filter((r) => !r.ok);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]!.error).toMatch(/^safety/);
  }, 120_000);

  it('catches a driver that sends before its writes are durable', () => {
    const failures = runRange(1, 1000, { sendBeforeSync: true }).filter((r) => !r.ok);
    expect(failures.length).toBeGreaterThan(0);
  }, 120_000);
});
