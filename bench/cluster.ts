/**
 * Cluster benchmark, same run, same client (rhea), same machine:
 *   - send-then-receive throughput of a 3-member cluster (client on the leader, and on a
 *     follower) vs a single node; every acknowledgement after fsync (single node: its event
 *     store; cluster: Raft, fsync on a majority, group commit); ratio printed;
 *   - leader failover: kill -9 of the leader until a new leader accepts a write (median).
 * Members are separate `quorate-broker node` processes dialling each other directly (no test
 * proxies: a ProxyMesh lives in its creator's process, and a busy client there would stall it).
 *
 *   npm run bench -- cluster [--messages 20000] [--bytes 1024] [--failovers 5]   (or npx tsx bench/cluster.ts ...)
 * or from bench/run.ts: `await run({ messages: 20000 })`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { failovers } from './lib/cluster-failover.js';
import { BenchCluster, startSingleNode, waitLeader } from './lib/cluster-processes.js';
import { logCpu, measure, type Throughput } from './lib/cluster-throughput.js';
import { flagValue } from './lib/flag-value.js';

export type { Throughput };

export interface ClusterBenchOptions {
  /** Messages sent, then received, per target (default 20000). */
  messages?: number;
  /** Body size (default 1024). */
  bytes?: number;
  /** Kill -9 the leader this many times (default 5; 0 skips). */
  failovers?: number;
  log?: (line: string) => void;
}

export interface ClusterBenchResult {
  single: Throughput;
  clusterLeader: Throughput;
  clusterFollower: Throughput;
  /** cluster (client on the leader) / single node, send-then-receive */
  ratio: number;
  ratioFollower: number;
  failoverMs: number[];
  failoverMedianMs: number | null;
}

export async function run(opts: ClusterBenchOptions = {}): Promise<ClusterBenchResult> {
  const n = opts.messages ?? flag('messages') ?? 20_000;
  const bytes = opts.bytes ?? flag('bytes') ?? 1024;
  const trials = opts.failovers ?? flag('failovers') ?? 5;
  const log = opts.log ?? ((line: string) => console.log(line));
  log(
    `cluster: ${n} messages of ${bytes} B sent then received (rhea, one connection), fsync before every ack`,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quorate-bench-cluster-'));
  let single: Throughput;
  const node = await startSingleNode(path.join(dir, 'single'));
  try {
    single = await measure(node.port, 'single', n, bytes, [
      { label: 'client' },
      ...(node.proc.pid !== undefined ? [{ label: 'broker', pid: node.proc.pid }] : []),
    ]);
  } finally {
    node.proc.kill('SIGTERM');
    await new Promise((r) => node.proc.once('exit', r));
  }
  log(
    `  single node:          send ${single.sendPerSecond}/s, receive ${single.receivePerSecond}/s, send-then-receive ${single.sendThenReceivePerSecond}/s${single.reconnects ? ` (${single.reconnects} reconnects)` : ''}`,
  );
  logCpu(single, log);
  const h = new BenchCluster(path.join(dir, 'cluster'));
  await h.start();
  try {
    const leader = await waitLeader(h);
    const follower = h.ids.find((x) => x !== leader)!;
    const port = (id: string): number => h.amqp.get(id)!;
    const clusterLeader = await measure(port(leader), 'cluster-leader', n, bytes, h.countedProcesses(leader));
    log(
      `  3 members, on leader:  send ${clusterLeader.sendPerSecond}/s, receive ${clusterLeader.receivePerSecond}/s, send-then-receive ${clusterLeader.sendThenReceivePerSecond}/s${clusterLeader.reconnects ? ` (${clusterLeader.reconnects} reconnects after leader changes)` : ''}`,
    );
    logCpu(clusterLeader, log);
    // the leader may have changed (the send reconnects then): labels as of this round's start
    const leaderNow = await waitLeader(h);
    const clusterFollower = await measure(
      port(follower),
      'cluster-follower',
      n,
      bytes,
      h.countedProcesses(leaderNow),
    );
    log(
      `  3 members, on follower: send ${clusterFollower.sendPerSecond}/s, receive ${clusterFollower.receivePerSecond}/s, send-then-receive ${clusterFollower.sendThenReceivePerSecond}/s${clusterFollower.reconnects ? ` (${clusterFollower.reconnects} reconnects after leader changes)` : ''}`,
    );
    logCpu(clusterFollower, log);
    const ratio = clusterLeader.sendThenReceivePerSecond / single.sendThenReceivePerSecond;
    const ratioFollower = clusterFollower.sendThenReceivePerSecond / single.sendThenReceivePerSecond;
    log(
      `  ratio cluster/single: ${(ratio * 100).toFixed(0)}% (client on the leader), ${(ratioFollower * 100).toFixed(0)}% (on a follower); target >= 50%`,
    );
    const fo = trials > 0 ? await failovers(h, trials, log) : [];
    const sorted = [...fo].sort((a, b) => a - b);
    const median = sorted.length > 0 ? Math.round(sorted[Math.floor(sorted.length / 2)]!) : null;
    if (median !== null) log(`  leader failover median: ${median} ms (target < 1000 ms)`);
    return {
      single,
      clusterLeader,
      clusterFollower,
      ratio: Math.round(ratio * 100) / 100,
      ratioFollower: Math.round(ratioFollower * 100) / 100,
      failoverMs: fo.map((x) => Math.round(x)),
      failoverMedianMs: median,
    };
  } finally {
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function flag(name: string): number | undefined {
  const raw = flagValue(process.argv, `--${name}`);
  return raw === undefined ? undefined : Number(raw);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const o: ClusterBenchOptions = {};
  const m = flag('messages');
  const b = flag('bytes');
  const f = flag('failovers');
  if (m !== undefined) o.messages = m;
  if (b !== undefined) o.bytes = b;
  if (f !== undefined) o.failovers = f;
  const r = await run(o);
  console.log(JSON.stringify(r));
}
