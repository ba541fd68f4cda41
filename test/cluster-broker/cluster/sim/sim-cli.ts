/**
 * Run the broker simulation from the shell: `npx tsx test/cluster-broker/cluster/sim/sim-cli.ts --seed 7` (one
 * seed, full error) or `--from 0 --count 500 [--nodes 5]` (a range; the soak). `--bug NAME`
 * runs with one of BrokerSimOptions' deliberate bugs (to replay a seed that catches it).
 */
import { type BrokerSimOptions, runBrokerSim } from './broker-sim.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const seed = arg('seed', -1);
const from = seed >= 0 ? seed : arg('from', 0);
const count = seed >= 0 ? 1 : arg('count', 100);
const nodes = arg('nodes', 3);
const bugAt = process.argv.indexOf('--bug');
const bug = bugAt >= 0 ? (process.argv[bugAt + 1] as BrokerSimOptions['bug']) : undefined;
let failed = 0;
const t0 = Date.now();
for (let s = from; s < from + count; s++) {
  const r = await runBrokerSim({ seed: s, nodes, ...(bug ? { bug } : {}) });
  if (!r.ok) {
    failed++;
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } else if (count === 1) process.stdout.write(`${JSON.stringify(r)}\n`);
}
process.stdout.write(`${count - failed}/${count} seeds ok in ${Date.now() - t0} ms\n`);
process.exitCode = failed > 0 ? 1 : 0;
