/**
 * Which quorate code a bench measures. By default the benches run what `npm install quorate`
 * gives: the package as tsup builds it (ESM, minus declarations), built once per bench process
 * from the current `src/` into `bench/.build/<pid>/`, for the client in the bench process and for
 * every broker process it starts. With `QUORATE_BENCH_FROM=src` (or `--from-src` on the bench
 * command line) they run `src/` through tsx instead, as the tests do.
 *
 * Why not src/ through tsx always: tsx transforms with esbuild's `keepNames`, which wraps every
 * named function expression in a call that sets its name, so each closure a hot path creates per
 * message costs a call the published build does not have. rhea, the benches' yardstick, runs as
 * plain JavaScript; so must we.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** True when the benches run `src/` through tsx rather than the built package. */
export const benchFromSource =
  process.env.QUORATE_BENCH_FROM === 'src' || process.argv.includes('--from-src');

let built: Promise<string> | undefined;

const execFileAsync = promisify(execFile);
/** Run by the child that builds: tsup's build() with the options passed as its argument. */
const BUILD_SCRIPT = "import { build } from 'tsup'; await build(JSON.parse(process.argv[1]));";

/**
 * The directory of this process's build (its `index.js`, `broker.js`, `bin/quorate-broker.js`),
 * built on first use and removed when the process exits. Under `bench/` so that the build's
 * external imports (ws, eventemitter3, prom-client) resolve from the project's node_modules.
 */
export function builtPackageDir(): Promise<string> {
  built ??= buildPackage();
  return built;
}

async function buildPackage(): Promise<string> {
  const outDir = join(root, 'bench', '.build', String(process.pid));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
  // the options of tsup.config.ts that shape the code (entries, splitting, bundled deps), without
  // the config file itself: its onSuccess writes into dist/, which a bench must not touch
  const options = {
    config: false,
    entry: {
      index: join(root, 'src', 'index.ts'),
      broker: join(root, 'src', 'broker.ts'),
      'bin/quorate-broker': join(root, 'src', 'cluster-broker', 'cli', 'main.ts'),
    },
    format: ['esm'],
    dts: false,
    sourcemap: false,
    target: 'node20',
    splitting: true,
    shims: true,
    noExternal: ['p-retry', 'is-network-error'],
    outDir,
    silent: true,
  };
  // built in a child process: tsup and esbuild loaded here would stay in this process's heap
  // (after a full collection: 30.9 MB with them, 9.4 MB without), and every full collection of
  // a measured phase would mark them too, billing the client under test for the bench's tools
  await execFileAsync(
    process.execPath,
    ['--input-type=module', '-e', BUILD_SCRIPT, JSON.stringify(options)],
    { cwd: root },
  );
  const page = join(root, 'src', 'cluster-broker', 'http', 'page');
  if (existsSync(page)) cpSync(page, join(outDir, 'status-page'), { recursive: true });
  return outDir;
}

/** The Node arguments that start `quorate-broker` (before its own arguments). */
export async function brokerEntryArgs(): Promise<string[]> {
  if (benchFromSource) return ['--import', 'tsx', join(root, 'src', 'cluster-broker', 'cli', 'main.ts')];
  return [join(await builtPackageDir(), 'bin', 'quorate-broker.js')];
}

/** The client package (`quorate`) the bench process measures. */
export async function loadQuorate(): Promise<typeof import('../../src/index.js')> {
  if (benchFromSource) return import('../../src/index.js');
  return (await import(
    pathToFileURL(join(await builtPackageDir(), 'index.js')).href
  )) as typeof import('../../src/index.js');
}
