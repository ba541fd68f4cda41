/**
 * Replication benchmark: 3 members over loopback TCP with fsync'd file storage.
 *   - throughput and commit latency (p50/p99) of 1 KiB entries, group commit on and off;
 *   - leader failover: kill -9 of the leader process until a new leader commits (median).
 *
 *   npx tsx bench/replication.ts [--seconds 5] [--window 4000] [--failovers 5] [--no-failover]
 * or from bench/run.ts: `await run({ seconds: 5 })`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Entry, Snapshot } from '../src/cluster-broker/replication/raft/types.js';
import { Replica } from '../src/cluster-broker/replication/replica.js';
import { freePorts, ProcessCluster } from '../test/cluster-broker/replication/process-cluster.js';

export interface ReplicationBenchOptions {
  /** Seconds of load per mode (default 5). */
  seconds?: number;
  /** Proposals kept in flight (default 4000). */
  window?: number;
  entryBytes?: number;
  /** Kill -9 the leader this many times (default 5; 0 skips the failover part). */
  failovers?: number;
  log?: (line: string) => void;
}

export interface ThroughputResult {
  groupCommit: boolean;
  /** Proposals kept in flight. */
  window?: number;
  committed: number;
  seconds: number;
  entriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  fsyncsPerSecond: number;
}

export interface ReplicationBenchResult {
  throughput: ThroughputResult[];
  failoverMs: number[];
  failoverMedianMs: number | null;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const countingMachine = () => {
  let n = 0;
  return {
    apply(_e: Entry): void {
      n++;
    },
    restore(_s: Snapshot): void {},
    snapshot(): Uint8Array {
      return new TextEncoder().encode(String(n));
    },
  };
};

async function throughput(
  groupCommit: boolean,
  o: Required<ReplicationBenchOptions>,
): Promise<ThroughputResult> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'quorate-bench-'));
  const ports = await freePorts(3);
  const ids = ['n1', 'n2', 'n3'];
  const members = Object.fromEntries(ids.map((id, i) => [id, { host: '127.0.0.1', port: ports[i]! }]));
  const replicas = await Promise.all(
    ids.map((id) =>
      Replica.start({
        id,
        clusterId: 'bench',
        members,
        dataDir: path.join(root, id),
        stateMachine: countingMachine(),
        groupCommit,
        snapshotEvery: 50_000,
      }),
    ),
  );
  for (const r of replicas) {
    r.on('error', (err) => o.log(`  ${r.id} failed: ${err.stack ?? err.message}`));
    if (process.env.BENCH_VERBOSE) r.on('role', (st) => o.log(`  ${r.id}: ${st.role} term ${st.term}`));
  }
  try {
    const findLeader = () =>
      new Promise<Replica>((resolve) => {
        const check = () => {
          const l = replicas.find((r) => r.isLeader() && r.canServeReads());
          if (l) resolve(l);
          else setTimeout(check, 5);
        };
        check();
      });
    let leader = await findLeader();
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const payload = new Uint8Array(o.entryBytes).fill(7);
    const latencies: number[] = [];
    let committed = 0;
    let failed = 0;
    const fsyncsBefore = replicas.reduce((n, r) => n + r.storageStats.fsyncs, 0);
    const t0 = performance.now();
    const end = t0 + o.seconds * 1000;
    await new Promise<void>((resolve) => {
      let inflight = 0;
      let waiting = false;
      const pump = () => {
        while (!waiting && inflight < o.window && performance.now() < end) {
          inflight++;
          const start = performance.now();
          leader.propose(payload).then(
            () => {
              latencies.push(performance.now() - start);
              committed++;
              inflight--;
              pump();
            },
            (err: unknown) => {
              if (failed === 0) o.log(`  first failed proposal: ${(err as Error).message}`);
              failed++;
              inflight--;
              // leadership moved: find the new leader (yielding to the event loop) before going on
              if (!waiting) {
                waiting = true;
                void findLeader().then((l) => {
                  leader = l;
                  waiting = false;
                  pump();
                });
              }
            },
          );
        }
        if (inflight === 0 && !waiting) resolve();
      };
      pump();
    });
    lag.disable();
    if (process.env.BENCH_VERBOSE)
      o.log(
        `  event loop delay max ${(lag.max / 1e6).toFixed(0)} ms p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms`,
      );
    const secs = (performance.now() - t0) / 1000;
    const fsyncs = replicas.reduce((n, r) => n + r.storageStats.fsyncs, 0) - fsyncsBefore;
    latencies.sort((a, b) => a - b);
    if (failed > 0) o.log(`  (${failed} proposals failed)`);
    return {
      groupCommit,
      committed,
      seconds: Number(secs.toFixed(2)),
      entriesPerSecond: Math.round(committed / secs),
      p50Ms: Number(percentile(latencies, 50).toFixed(2)),
      p99Ms: Number(percentile(latencies, 99).toFixed(2)),
      fsyncsPerSecond: Math.round(fsyncs / secs),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.close()));
    rmSync(root, { recursive: true, force: true });
  }
}

async function failover(trials: number, log: (line: string) => void): Promise<number[]> {
  const cluster = await ProcessCluster.create({ size: 3 });
  const out: number[] = [];
  try {
    await cluster.startAll();
    await cluster.propose('warm-up');
    for (let t = 0; t < trials; t++) {
      const old = await cluster.waitLeader();
      const t0 = performance.now();
      await old.kill9();
      // a new leader that commits a new entry
      for (;;) {
        const r = await cluster.propose(`after-kill-${t}`, 30_000);
        if (r.ok) break;
      }
      const ms = performance.now() - t0;
      out.push(Math.round(ms));
      log(`  failover ${t + 1}: ${Math.round(ms)} ms (killed ${old.id})`);
      await old.start();
      await cluster.waitApplied(t + 2);
    }
  } finally {
    await cluster.destroy();
  }
  return out;
}

export async function run(opts: ReplicationBenchOptions = {}): Promise<ReplicationBenchResult> {
  const o: Required<ReplicationBenchOptions> = {
    seconds: opts.seconds ?? 5,
    window: opts.window ?? 4000,
    entryBytes: opts.entryBytes ?? 1024,
    failovers: opts.failovers ?? 5,
    log: opts.log ?? ((line) => console.log(line)),
  };
  o.log(`replication: 3 members, loopback TCP, fsync, ${o.entryBytes} B entries, ${o.window} in flight`);
  const results: ThroughputResult[] = [];
  // loaded (window proposals in flight; group commit off gets a smaller window, it is fsync-bound),
  // then unloaded (one proposal at a time: the bare commit latency of one entry)
  const modes: [boolean, number, string][] = [
    [true, o.window, `group commit on,  ${o.window} in flight`],
    [false, Math.min(o.window, 64), `group commit off, ${Math.min(o.window, 64)} in flight`],
    [true, 1, 'one at a time'],
  ];
  for (const [gc, window, label] of modes) {
    const r = await throughput(gc, {
      ...o,
      window,
      seconds: window === 1 ? Math.min(o.seconds, 3) : o.seconds,
    });
    results.push({ ...r, window });
    o.log(
      `  ${label}: ${r.entriesPerSecond} committed entries/s, ` +
        `latency p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms, ${r.fsyncsPerSecond} fsyncs/s (${r.committed} in ${r.seconds} s)`,
    );
  }
  const fo = o.failovers > 0 ? await failover(o.failovers, o.log) : [];
  const sorted = [...fo].sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : null;
  if (median !== null)
    o.log(`  leader failover (kill -9 -> new leader commits): median ${median} ms of ${fo.join(', ')}`);
  return { throughput: results, failoverMs: fo, failoverMedianMs: median };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (n: string) => {
    const i = process.argv.indexOf(`--${n}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const result = await run({
    ...(arg('seconds') ? { seconds: Number(arg('seconds')) } : {}),
    ...(arg('window') ? { window: Number(arg('window')) } : {}),
    ...(process.argv.includes('--no-failover')
      ? { failovers: 0 }
      : arg('failovers')
        ? { failovers: Number(arg('failovers')) }
        : {}),
  });
  console.log(JSON.stringify(result));
  process.exit(0);
}
