/**
 * Runs benchmark suites: every bench/<name>.ts given on the command line, or all of them.
 * A suite exports `run(opts?: { log?(line: string): void }): Promise<unknown>` returning its
 * results. With --json the human output goes to stderr and one JSON object
 * `{ <suite>: <result> }` is printed to stdout.
 *
 *   npx tsx bench/run.ts [suite...] [--json] [suite flags]   e.g.  npx tsx bench/run.ts codec --json
 *
 * `report` (bench/report.ts) runs the benches of docs/benchmarks.md and rewrites that page, so it
 * runs only when asked by name, never as part of "all of them".
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Suite {
  run(opts?: { log?: (line: string) => void }): Promise<unknown>;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const json = args.includes('--json');
const registered = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
// Suite names come first; what follows the first --flag belongs to the suites (e.g. `e2e --rounds 3`).
const firstFlag = args.findIndex((a) => a.startsWith('--'));
const asked = firstFlag < 0 ? args : args.slice(0, firstFlag);
const unknown = asked.filter((a) => !registered.includes(a));
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; available: ${registered.join(', ')}`);
  process.exit(2);
}
const ON_REQUEST_ONLY = ['report'];
const suites = asked.length > 0 ? asked : registered.filter((s) => !ON_REQUEST_ONLY.includes(s));
const log = json ? (line: string) => console.error(line) : (line: string) => console.log(line);

const results: Record<string, unknown> = {};
for (const name of suites) {
  log(`== ${name}`);
  const mod = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as Partial<Suite>;
  if (typeof mod.run !== 'function') {
    log(`(skipped: bench/${name}.ts exports no run())`);
    continue;
  }
  results[name] = await mod.run({ log });
}
if (json) {
  console.log(JSON.stringify(results, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
}
