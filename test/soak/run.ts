/**
 * `npm run soak -- <name> [args]`: the long runs, one subcommand each, by hand or on a schedule
 * (not in `npm test`). A subcommand is a file: `sim` runs the replication simulation's CLI
 * (test/cluster-broker/replication/sim-cli.ts), any other name runs test/soak/<name>.ts; its arguments are passed
 * on, and its exit code is the runner's. Without a name it lists what there is.
 *   npm run soak -- sim --seeds 200000 [--start 1]
 *   npm run soak -- big-store
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
/** Soaks that live elsewhere, by name. */
const ELSEWHERE: Record<string, string> = {
  sim: fileURLToPath(new URL('../cluster-broker/replication/sim-cli.ts', import.meta.url)),
};

function available(): string[] {
  const own = readdirSync(here)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
    .map((f) => f.slice(0, -3));
  return [...Object.keys(ELSEWHERE), ...own].sort();
}

const [name, ...args] = process.argv.slice(2);
if (name === undefined || name === '--help' || name === '-h') {
  console.log(`usage: npm run soak -- <name> [args]\navailable: ${available().join(', ')}`);
  process.exit(name === undefined ? 2 : 0);
}
const file = ELSEWHERE[name] ?? `${here}${name}.ts`;
if (!/^[a-z0-9-]+$/.test(name) || !existsSync(file)) {
  console.error(`no soak named ${JSON.stringify(name)}; available: ${available().join(', ')}`);
  process.exit(2);
}
const t0 = Date.now();
const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
process.on('SIGINT', forward('SIGINT'));
process.on('SIGTERM', forward('SIGTERM'));
child.on('exit', (code, signal) => {
  console.log(`soak ${name}: ${signal ?? `exit ${code}`} after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  process.exit(code ?? 1);
});
