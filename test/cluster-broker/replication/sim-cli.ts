/**
 * Soak runner for the deterministic simulation of a cluster of real Replicas.
 *   tsx test/cluster-broker/replication/sim-cli.ts --seeds 100000 [--start 1] [--nodes 3|5|mixed]
 *       [--fault-ms 3000] [--no-corruption] [--losses flip,lose-meta,lose-log,lose-snapshot,wipe]
 *       [--unsafe skip-up-to-date|commit-old-terms|send-before-persist|ignore-recovery|blank-majority|old-commit-recovery|stale-blank|stale-recovered]
 *       [--seed S --trace 400]     (replay one seed and print its trace)
 */
import { STORE_LOSSES, type StoreLoss } from './sim/sim-member.js';
import { runSeed, type SimOptions } from './sim/simulation.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function parseLosses(list: string): StoreLoss[] {
  const out = list.split(',');
  for (const l of out)
    if (!(STORE_LOSSES as readonly string[]).includes(l))
      throw new Error(`--losses: ${l} is not one of ${STORE_LOSSES.join(',')}`);
  return out as StoreLoss[];
}

const unsafeName = arg('unsafe');
const base: Omit<SimOptions, 'seed'> = {
  ...(arg('fault-ms') ? { faultMs: Number(arg('fault-ms')) } : {}),
  ...(unsafeName === 'skip-up-to-date' ? { unsafe: { skipUpToDateCheck: true } } : {}),
  ...(unsafeName === 'commit-old-terms' ? { unsafe: { commitOldTermsByCount: true } } : {}),
  ...(unsafeName === 'send-before-persist' ? { unsafeDriver: { sendBeforePersist: true } } : {}),
  ...(unsafeName === 'ignore-recovery' ? { unsafe: { ignoreRecovery: true } } : {}),
  ...(unsafeName === 'blank-majority' ? { unsafe: { bootstrapOnBlankMajority: true } } : {}),
  ...(unsafeName === 'old-commit-recovery' ? { unsafe: { endRecoveryOnOldCommit: true } } : {}),
  ...(unsafeName === 'stale-blank' ? { unsafe: { countStaleBlankClaims: true } } : {}),
  ...(unsafeName === 'stale-recovered' ? { unsafe: { acceptStaleRecoveredNews: true } } : {}),
  ...(process.argv.includes('--no-corruption') ? { corruption: false } : {}),
  ...(arg('losses') ? { losses: parseLosses(arg('losses')!) } : {}),
};
const nodesArg = arg('nodes') ?? 'mixed';
const nodesFor = (seed: number): number =>
  nodesArg === 'mixed' ? (seed % 2 === 0 ? 3 : 5) : Number(nodesArg);

const single = arg('seed');
if (single !== undefined) {
  const seed = Number(single);
  const r = await runSeed({ ...base, seed, nodes: nodesFor(seed), trace: Number(arg('trace') ?? 400) });
  for (const line of r.trace ?? []) console.log(line);
  console.log(JSON.stringify({ ...r, trace: undefined }));
  process.exit(r.ok ? 0 : 1);
}

const seeds = Number(arg('seeds') ?? 1000);
const start = Number(arg('start') ?? 1);
const maxReports = Number(arg('max-failures') ?? 5);
const t0 = Date.now();
let failures = 0;
let steps = 0;
let corruptions = 0;
const lossesWithAnotherDown: Record<string, number> = {};
let lastReport = t0;
const failed: number[] = [];
const recoveries: number[] = [];
for (let seed = start; seed < start + seeds; seed++) {
  const r = await runSeed({ ...base, seed, nodes: nodesFor(seed) });
  steps += r.steps;
  corruptions += r.corruptions;
  for (const [k, v] of Object.entries(r.lossesWithAnotherDown))
    lossesWithAnotherDown[k] = (lossesWithAnotherDown[k] ?? 0) + v;
  if (r.recoveryMs !== undefined) recoveries.push(r.recoveryMs);
  if (!r.ok) {
    failures++;
    failed.push(seed);
    if (failures <= maxReports) {
      console.log(`seed ${seed} (nodes ${nodesFor(seed)}) FAILED: ${r.error}`);
      for (const line of (r.trace ?? []).slice(-60)) console.log(`  ${line}`);
    }
  }
  const now = Date.now();
  if (now - lastReport > 10_000) {
    lastReport = now;
    console.log(
      `... ${seed - start + 1}/${seeds} seeds, ${failures} failures, ${((now - t0) / 1000).toFixed(0)} s`,
    );
  }
}
const secs = (Date.now() - t0) / 1000;
console.log(
  JSON.stringify({
    seeds,
    start,
    nodes: nodesArg,
    unsafe: unsafeName ?? null,
    failures,
    failedSeeds: failed.slice(0, 50),
    seconds: Number(secs.toFixed(1)),
    seedsPerMinute: Math.round((seeds / secs) * 60),
    steps,
    corruptions,
    lossesWithAnotherDown,
    // simulated time from healing to a new entry applied on every member
    recoveryMs: {
      p50: recoveries.sort((a, b) => a - b)[Math.floor(recoveries.length / 2)] ?? null,
      p99: recoveries[Math.floor(recoveries.length * 0.99)] ?? null,
      max: recoveries[recoveries.length - 1] ?? null,
    },
  }),
);
process.exit(failures > 0 && !unsafeName ? 1 : 0);
