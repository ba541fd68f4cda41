/**
 * Re-runs the benches docs/benchmarks.md shows and rewrites its generated section (between the
 * markers of bench/lib/report-page.ts) with what they printed, the commit (`+dirty` when the tree
 * has changes), the date, the machine and this command: figures on the page are re-run, never
 * copied. A bench that fails is reported as failed in the section, not left out.
 *
 *   npm run bench -- report [--quick] [--only codec,e2e,cluster,topics,federation] [--out FILE]
 *
 * --quick: small counts (minutes instead of most of an hour), to check the command; the section
 * says so. --out: write that file instead of docs/benchmarks.md (it must hold the markers).
 * e2e's own flags (e.g. --targets single,cluster) pass through to it; without --targets, e2e runs
 * every target, the 3-node RabbitMQ quorum queue included.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALL_TARGETS, type TargetName } from './lib/e2e-targets.js';
import { renderReport, replaceGenerated, type SuiteReport } from './lib/report-page.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface SuiteSpec {
  name: string;
  title: string;
  command: (quick: boolean) => string;
  run: (quick: boolean, log: (line: string) => void) => Promise<unknown>;
}

/**
 * The measured rounds of the topics and federation benches run this many times (`--repeat`): their
 * issue #34 targets are judged on the median, one run's ratio swinging by a fifth on a shared
 * machine. The quick report, a check of the command, runs them once.
 */
const repeatsOf = (quick: boolean) => (quick ? 1 : 3);
const repeatFlag = (quick: boolean) => (quick ? '' : ` --repeat ${repeatsOf(quick)}`);

/**
 * The e2e bench's measured rounds: four, so that each figure is a median (the middle two's mean)
 * that one round's swing (a collection, a neighbour's burst) moves less than a mean of two, and an
 * even count: `--receive both` alternates which of the two quorate runs meets the broker right
 * after rhea's, and an odd count gives one of them that place more often.
 */
const e2eRoundsOf = (quick: boolean) => (quick ? 1 : 4);

/** The benches of the page, each with the counts of the full and the quick report. */
const SUITES: SuiteSpec[] = [
  {
    name: 'codec',
    title: 'Codec',
    command: (q) => `npm run bench -- codec --rounds ${q ? 1 : 3}`,
    run: async (q, log) => (await import('./codec.js')).run({ log, rounds: q ? 1 : 3 }),
  },
  {
    name: 'e2e',
    title: 'End to end',
    command: (q) =>
      `npm run bench -- e2e --messages ${q ? 2000 : 20000} --rounds ${e2eRoundsOf(q)} --warm ${q ? 2000 : 20000} --receive both --targets ${e2eTargets().join(',')}`,
    run: async (q, log) =>
      (await import('./e2e.js')).run({
        log,
        messages: q ? 2000 : 20_000,
        rounds: e2eRoundsOf(q),
        // as large as a round: the brokers at steady state (docs/benchmarks.md#e2e-warm-up)
        warm: q ? 2000 : 20_000,
        receive: 'both',
        targets: e2eTargets(),
      }),
  },
  {
    name: 'cluster',
    title: 'Cluster',
    command: (q) => `npm run bench -- cluster --messages ${q ? 2000 : 20000} --failovers ${q ? 1 : 5}`,
    run: async (q, log) =>
      (await import('./cluster.js')).run({ log, messages: q ? 2000 : 20_000, failovers: q ? 1 : 5 }),
  },
  {
    name: 'topics',
    title: 'Topics',
    // a warm-up as large as the round: the broker at steady state, not still compiling its hot
    // code in the first (topic) round (docs/benchmarks.md#topic-delivery-warm-up)
    command: (q) =>
      `npm run bench -- topics --messages ${q ? 500 : 5000} --warm ${q ? 500 : 5000}${repeatFlag(q)}`,
    run: async (q, log) =>
      (await import('./topics.js')).run({
        log,
        messages: q ? 500 : 5000,
        warm: q ? 500 : 5000,
        repeat: repeatsOf(q),
      }),
  },
  {
    name: 'federation',
    title: 'Federation',
    command: (q) =>
      `npm run bench -- federation --messages ${q ? 1000 : 10000} --window 1000 --warm ${q ? 1000 : 10000} --preload${repeatFlag(q)}`,
    run: async (q, log) =>
      (await import('./federation.js')).run({
        log,
        messages: q ? 1000 : 10_000,
        window: 1000,
        // as large as a round: the members at steady state (docs/benchmarks.md#e2e-warm-up)
        warm: q ? 1000 : 10_000,
        preload: true,
        repeat: repeatsOf(q),
      }),
  },
];

/** e2e's `--targets` when given to the report (it passes through to e2e), else every target. */
function e2eTargets(): TargetName[] {
  const i = process.argv.indexOf('--targets');
  const given = i >= 0 ? process.argv[i + 1] : undefined;
  return given === undefined ? ALL_TARGETS : (given.split(',') as TargetName[]);
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** The short commit, `+dirty` when tracked files differ from it or untracked ones exist. */
function commitLabel(): string {
  const head = git('rev-parse', '--short', 'HEAD');
  return git('status', '--porcelain') === '' ? head : `${head}+dirty`;
}

function machine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
  return `${cpus.length} cores, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, load average ${load} at the start`;
}

export interface ReportOptions {
  log?: (line: string) => void;
  quick?: boolean;
  /** Bench names to run (default: all of SUITES). */
  only?: string[];
  /** The page to rewrite (default docs/benchmarks.md). */
  out?: string;
}

function argsFromCommandLine(argv: string[]): ReportOptions {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const opts: ReportOptions = {};
  if (argv.includes('--quick')) opts.quick = true;
  const only = value('--only');
  if (only !== undefined) opts.only = only.split(',');
  const out = value('--out');
  if (out !== undefined) opts.out = out;
  return opts;
}

export async function run(opts: ReportOptions = {}): Promise<{ out: string; suites: SuiteReport[] }> {
  const cli = argsFromCommandLine(process.argv.slice(2));
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const quick = opts.quick ?? cli.quick ?? false;
  const only = opts.only ?? cli.only;
  const out = path.resolve(root, opts.out ?? cli.out ?? 'docs/benchmarks.md');
  const unknown = (only ?? []).filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new Error(
      `--only ${unknown.join(',')}: not a bench of the report (${SUITES.map((s) => s.name).join(', ')})`,
    );
  // read before any bench runs: a page without its markers fails now, not after an hour
  replaceGenerated(readFileSync(out, 'utf8'), '');
  const commit = commitLabel();
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const where = machine();
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
  const t0 = performance.now();
  const suites: SuiteReport[] = [];
  for (const spec of SUITES.filter((s) => only === undefined || only.includes(s.name))) {
    log(`== report: ${spec.name}`);
    const lines: string[] = [];
    const t = performance.now();
    const suite: SuiteReport = { title: spec.title, command: spec.command(quick), lines, seconds: 0 };
    try {
      await spec.run(quick, (line) => {
        lines.push(line);
        log(line);
      });
    } catch (err) {
      suite.error = err instanceof Error ? err.message : String(err);
      log(`${spec.name} failed: ${suite.error}`);
    }
    suite.seconds = (performance.now() - t) / 1000;
    suites.push(suite);
  }
  const section = renderReport(
    { commit, date, machine: where, command, quick, seconds: (performance.now() - t0) / 1000 },
    suites,
  );
  // read again: the page may have been edited while the benches ran
  writeFileSync(out, replaceGenerated(readFileSync(out, 'utf8'), section));
  log(`wrote ${path.relative(root, out)} (commit ${commit})`);
  return { out, suites };
}
