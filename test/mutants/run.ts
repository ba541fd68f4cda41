/**
 * A mutation check you can rerun: each mutant below breaks one data-loss promise in the source
 * (an exact text replaced once). The runner copies the repository's tracked files into a scratch
 * directory under the OS temp dir (node_modules linked, not copied), applies one mutant at a time,
 * runs the test files that guard that promise, and records the mutant as caught (the tests
 * failed) or survived (they passed). The scratch copy is restored before the next mutant.
 *
 *   npm run mutants                      # every mutant, one after the other (slow: not in CI)
 *   npm run mutants -- --only NAME       # one mutant (repeatable)
 *   npm run mutants -- --list            # the list, nothing run
 *   npm run mutants -- --no-baseline     # skip the first run of the tests without any mutant
 *   MUTANTS_VERBOSE=1 npm run mutants    # also the tail of each vitest run
 *
 * Prints a table (mutant, promise, tests, result, seconds) and exits 1 if any mutant survived,
 * 2 if the runner itself failed (a text to find not found exactly once, an unknown name).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { MUTANTS, type Mutant } from './mutants.js';

interface Outcome {
  readonly mutant: Mutant;
  readonly result: 'caught' | 'survived';
  readonly seconds: number;
}

class RunnerError extends Error {}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The tracked files (what a clean checkout holds), copied into a fresh scratch directory. */
function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quorate-mutants-'));
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0');
  for (const f of files) {
    if (f === '') continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    try {
      copyFileSync(join(ROOT, f), join(dir, f));
    } catch (err) {
      // a tracked file deleted in the work tree is not part of what is tested
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The file's text with the mutant applied; throws unless the text to find occurs exactly once. */
function mutated(root: string, m: Mutant): { original: string; changed: string } {
  const original = readFileSync(join(root, m.file), 'utf8');
  const count = original.split(m.find).length - 1;
  if (count !== 1)
    throw new RunnerError(`${m.name}: the text to find occurs ${count} times in ${m.file}, not once`);
  return { original, changed: original.replace(m.find, () => m.replace) };
}

/** Runs vitest on `tests` in the scratch copy; resolves with its exit code. */
function runTests(scratch: string, label: string, tests: readonly string[]): Promise<number> {
  return new Promise((resolveCode, reject) => {
    const child = spawn('npx', ['vitest', 'run', ...tests], {
      cwd: scratch,
      stdio: ['ignore', 'pipe', 'pipe'],
      // no CI reporter: it would write a results file into the scratch copy
      env: { ...process.env, CI: '' },
    });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (process.env.MUTANTS_VERBOSE) process.stderr.write(tail);
      // a missing test file would "fail" for the wrong reason: refuse it
      if (/No test files found/.test(tail))
        reject(new RunnerError(`${label}: no test files found (${tests.join(' ')})`));
      else resolveCode(code ?? (signal ? 128 : 1));
    });
  });
}

function table(outcomes: readonly Outcome[]): string {
  const rows = [
    ['mutant', 'promise', 'tests', 'result', 'seconds'],
    ...outcomes.map((o) => [
      o.mutant.name,
      o.mutant.promise,
      o.mutant.tests.join(', '),
      o.result,
      o.seconds.toFixed(0),
    ]),
  ];
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(rows[0]!), line(rows[0]!.map(() => '---')), ...rows.slice(1).map(line)].join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', multiple: true },
      list: { type: 'boolean' },
      'no-baseline': { type: 'boolean' },
    },
  });
  const only = values.only ?? [];
  for (const name of only) {
    if (!MUTANTS.some((m) => m.name === name)) throw new RunnerError(`no mutant named ${name}`);
  }
  const chosen = only.length > 0 ? MUTANTS.filter((m) => only.includes(m.name)) : MUTANTS;
  // every text to find is checked before anything runs: a stale mutant fails at once
  for (const m of chosen) mutated(ROOT, m);
  if (values.list) {
    for (const m of chosen)
      process.stdout.write(`${m.name}: ${m.promise}\n  ${m.file}\n  ${m.tests.join(' ')}\n`);
    return 0;
  }
  const scratch = scratchCopy();
  const outcomes: Outcome[] = [];
  try {
    if (!values['no-baseline']) {
      // a mutant is caught only if its tests pass without it: check that once, unmutated
      const all = [...new Set(chosen.flatMap((m) => m.tests))];
      process.stderr.write(`baseline (no mutant): ${all.join(' ')} ...\n`);
      if ((await runTests(scratch, 'baseline', all)) !== 0) {
        throw new RunnerError('the tests fail without any mutant (MUTANTS_VERBOSE=1 shows why)');
      }
    }
    for (const m of chosen) {
      process.stderr.write(`mutant ${m.name}: ${m.tests.join(' ')} ...\n`);
      const { original, changed } = mutated(scratch, m);
      writeFileSync(join(scratch, m.file), changed);
      const started = performance.now();
      try {
        const code = await runTests(scratch, m.name, m.tests);
        const outcome: Outcome = {
          mutant: m,
          result: code === 0 ? 'survived' : 'caught',
          seconds: (performance.now() - started) / 1000,
        };
        outcomes.push(outcome);
        process.stderr.write(`mutant ${m.name}: ${outcome.result} (${outcome.seconds.toFixed(0)} s)\n`);
      } finally {
        writeFileSync(join(scratch, m.file), original);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(`${table(outcomes)}\n`);
  const survived = outcomes.filter((o) => o.result === 'survived');
  process.stdout.write(
    survived.length === 0
      ? `all ${outcomes.length} mutants caught\n`
      : `${survived.length} of ${outcomes.length} mutants survived: ${survived.map((o) => o.mutant.name).join(', ')}\n`,
  );
  return survived.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mutants: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
