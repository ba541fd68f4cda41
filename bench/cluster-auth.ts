/**
 * What the cluster secret costs: the cluster bench's send-then-receive throughput (rhea, client on
 * the leader, fsync on a majority before every ack) of a 3-member cluster with a cluster secret
 * (every member-to-member connection authenticated) and without one, interleaved over several
 * trials in one run so machine noise falls on both; medians and their ratio printed.
 *
 *   npx tsx bench/run.ts cluster-auth [--trials 3] [--messages 20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BenchCluster, waitLeader } from './lib/cluster-processes.js';
import { measure } from './lib/cluster-throughput.js';

export interface ClusterAuthBenchOptions {
  trials?: number;
  messages?: number;
  bytes?: number;
  log?: (line: string) => void;
}

export interface ClusterAuthBenchResult {
  /** Send-then-receive msg/s of each trial. */
  withSecret: number[];
  withoutSecret: number[];
  /** median with / median without (1 = free). */
  ratio: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function trial(dir: string, secret: boolean, n: number, bytes: number): Promise<number> {
  const cluster = new BenchCluster(dir, { secret });
  await cluster.start();
  try {
    const leader = await waitLeader(cluster);
    const t = await measure(cluster.amqp.get(leader)!, secret ? 'with-secret' : 'without-secret', n, bytes);
    return t.sendThenReceivePerSecond;
  } finally {
    await cluster.stop();
  }
}

export async function run(opts: ClusterAuthBenchOptions = {}): Promise<ClusterAuthBenchResult> {
  const trials = opts.trials ?? flag('trials') ?? 3;
  const n = opts.messages ?? flag('messages') ?? 20_000;
  const bytes = opts.bytes ?? 1024;
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  log(
    `cluster-auth: ${trials} trials x ${n} messages of ${bytes} B, 3 members, with and without a cluster secret`,
  );
  const root = mkdtempSync(path.join(os.tmpdir(), 'quorate-bench-cluster-auth-'));
  const withSecret: number[] = [];
  const withoutSecret: number[] = [];
  try {
    for (let i = 0; i < trials; i++) {
      // alternate which goes first, so a trend in the machine's load does not favour one
      const order = i % 2 === 0 ? [true, false] : [false, true];
      for (const secret of order) {
        const rate = await trial(path.join(root, `t${i}-${secret ? 'auth' : 'open'}`), secret, n, bytes);
        (secret ? withSecret : withoutSecret).push(rate);
        log(
          `  trial ${i + 1}, ${secret ? 'with secret   ' : 'without secret'}: ${rate} msg/s send-then-receive`,
        );
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const ratio = Math.round((median(withSecret) / median(withoutSecret)) * 1000) / 1000;
  log(
    `  median with secret ${median(withSecret)}/s, without ${median(withoutSecret)}/s: ratio ${ratio} (target >= 0.95)`,
  );
  return { withSecret, withoutSecret, ratio };
}

function flag(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
