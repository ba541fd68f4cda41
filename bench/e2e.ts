/**
 * End to end, side by side: rhea and quorate against four brokers in one run, the same workload
 * (N x 1 KiB sent with at most `window` unsettled, settled on accept; then received with credit
 * `window`, each accepted), msg/s per phase and the quorate/rhea ratios. quorate receives with
 * batch receives (`receive({ max: window })`) by default; `--receive iterator` measures the
 * one-at-a-time `for await` path instead, `--receive both` runs each round twice and prints both.
 * A second table gives this process's CPU time per message in each phase (the clients run here,
 * the brokers elsewhere): on a shared machine rates follow the other load, CPU per message less.
 * Each phase ends with a full collection counted in it, for both clients (bench/lib/clients.ts).
 *
 * Brokers: our single node (its own process, durable store with fsync), our 3-member cluster
 * (both clients on its leader, so the followers' CPU is replication alone), RabbitMQ 3.10 (one node, classic queue), the Qpid Proton
 * C example broker (compiled here from Debian's examples) and, only when named in --targets,
 * RabbitMQ 3.10 with a quorum queue on 3 nodes (`rabbitmq-quorum`: each run's queue declared
 * first, both clients on the node leading it). What is missing is apt-installed. With both
 * `cluster` and `rabbitmq-quorum`, a last line compares the replicated queues: the quorate client
 * on our cluster against rhea on the quorum queue (and against the quorate client there).
 *
 *   npm run bench -- e2e [--messages 20000] [--window 1000] [--rounds 1] [--warm N]
 *                        [--targets single,cluster,rabbitmq,proton,rabbitmq-quorum]
 *                        [--receive batch|iterator|both] [--profile [DIR]]
 *
 * --warm N: messages each client sends and receives before the measured rounds, on every target;
 * default a tenth of --messages, at least 100. A warm-up as large as a round measures the brokers
 * at steady state: a cluster member still compiles its apply path, and faults in the memory its
 * log and queues grow into, through several rounds of 20,000 (docs/benchmarks.md#e2e-warm-up).
 *
 * --profile writes CPU profiles (.cpuprofile, open in Chrome DevTools) of the client (this
 * process, around each quorate run) and of our broker processes, into DIR (default: a new dir
 * under the OS temp dir, printed).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEndpoint } from './lib/broker-processes.js';
import type { RunningBroker } from './lib/brokers.js';
import { type BenchClient, quorateBatchClient, quorateClient, rheaClient } from './lib/clients.js';
import {
  addProcessCpu,
  type E2eRow,
  fmt,
  followerOverLeaderCpu,
  logProcessCpu,
  median,
  ratio,
} from './lib/e2e-figures.js';
import { DEFAULT_TARGETS, startTarget, TARGETS, type TargetName } from './lib/e2e-targets.js';
import { flagValue } from './lib/flag-value.js';
import { profiled } from './lib/profile.js';
import { defaultWarm, parseWarm } from './lib/warm-option.js';

export type { E2eRow, TargetName };
export interface E2eOptions {
  log?: (line: string) => void;
  messages?: number;
  window?: number;
  rounds?: number;
  /** Messages of each client's warm-up. Default a tenth of `messages`, at least 100. */
  warm?: number;
  targets?: TargetName[];
  /** How quorate receives: batch receives (default), the iterator, or both in turn. */
  receive?: ReceivePath;
  /** Directory for CPU profiles; undefined: no profiling. */
  profileDir?: string;
}

type ReceivePath = 'batch' | 'iterator' | 'both';

export interface E2eResult {
  messages: number;
  window: number;
  rows: E2eRow[];
  /** quorate/rhea, medians, per target and phase */
  ratios: Record<string, { send: number; receive: number; iteratorReceive?: number }>;
  /**
   * With both `cluster` and `rabbitmq-quorum`: the quorate client's msg/s on our cluster over
   * rhea's on the quorum queue (`send`, `receive`), and over the quorate client's there
   * (`quorateSend`, `quorateReceive`); medians.
   */
  clusterOverRabbitQuorum?: { send: number; receive: number; quorateSend: number; quorateReceive: number };
  /**
   * Our cluster with the quorate client on its leader: the costlier follower's CPU per message
   * over the leader's, medians (issue 34 asks for at most 0.5), send and receive.
   */
  followerOverLeader?: { send: number; receive: number };
  profileDir?: string;
}

function argsFromCommandLine(argv: string[]): E2eOptions {
  const value = (flag: string) => flagValue(argv, flag);
  const opts: E2eOptions = {};
  const n = value('--messages');
  if (n !== undefined) opts.messages = Number(n);
  const w = value('--window');
  if (w !== undefined) opts.window = Number(w);
  const r = value('--rounds');
  if (r !== undefined) opts.rounds = Number(r);
  const warm = parseWarm(value('--warm'));
  if (warm !== undefined) opts.warm = warm;
  const t = value('--targets');
  if (t !== undefined) {
    const names = t.split(',');
    const unknown = names.filter((name) => !(name in TARGETS));
    if (unknown.length > 0)
      throw new Error(`--targets ${unknown.join(',')}: not a target (${Object.keys(TARGETS).join(', ')})`);
    opts.targets = names as TargetName[];
  }
  const rc = value('--receive');
  if (rc !== undefined) {
    if (rc !== 'batch' && rc !== 'iterator' && rc !== 'both')
      throw new Error(`--receive ${rc}: batch, iterator or both`);
    opts.receive = rc;
  }
  const p = argv.indexOf('--profile');
  if (p >= 0) {
    const dir = argv[p + 1];
    opts.profileDir =
      dir !== undefined && !dir.startsWith('--') ? dir : mkdtempSync(join(tmpdir(), 'quorate-prof-'));
  }
  return opts;
}

export async function run(opts: E2eOptions = {}): Promise<E2eResult> {
  const cli = argsFromCommandLine(process.argv.slice(2));
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const n = opts.messages ?? cli.messages ?? 20_000;
  const window = opts.window ?? cli.window ?? 1000;
  const rounds = opts.rounds ?? cli.rounds ?? 1;
  const warm = opts.warm ?? cli.warm ?? defaultWarm(n);
  const targets = opts.targets ?? cli.targets ?? DEFAULT_TARGETS;
  const profileDir = opts.profileDir ?? cli.profileDir;
  const receivePath = opts.receive ?? cli.receive ?? 'batch';
  const mainClient = receivePath === 'iterator' ? quorateClient : quorateBatchClient;
  if (profileDir !== undefined) {
    mkdirSync(profileDir, { recursive: true });
    log(`CPU profiles into ${profileDir}`);
  }
  const body = Buffer.alloc(1024, 0x61);
  const rows: E2eRow[] = [];
  const both = receivePath === 'both';

  for (const target of targets) {
    const row: E2eRow = {
      target,
      broker: TARGETS[target],
      rheaSend: [],
      quorateSend: [],
      rheaReceive: [],
      quorateReceive: [],
      quorateIteratorReceive: [],
      cpu: { rheaSend: [], quorateSend: [], rheaReceive: [], quorateReceive: [], quorateIteratorReceive: [] },
      processCpu: {
        rheaSend: {},
        quorateSend: {},
        rheaReceive: {},
        quorateReceive: {},
        quorateIteratorReceive: {},
      },
    };
    const perMsg = (cpuMs: number) => Math.round((cpuMs * 1000) / n);
    rows.push(row);
    const ours = target === 'single' || target === 'cluster';
    const brokerNodeArgs =
      profileDir !== undefined && ours
        ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, `broker-${target}`)]
        : [];
    let broker: RunningBroker | undefined;
    try {
      broker = await startTarget(target, brokerNodeArgs);
      const once = async (client: BenchClient, name: string, round: number, count: number) => {
        const q = `e2e-${name}-${round}-${Date.now()}`;
        // a RabbitMQ quorum queue is declared first, and reached on the node leading it
        const declared = await broker!.declareQueue?.(q);
        // the cluster's roles are read again before every run: a leader change moves the client
        // to the new leader and the labels with it
        const at = await benchEndpoint(broker!, declared);
        return client(at.url, declared?.address ?? q, count, body, window, at.processes);
      };
      // warm-up (JIT, connection paths, the brokers' memory), every client
      await once(rheaClient, 'rhea-warm', 0, warm);
      await once(mainClient, 'quorate-warm', 0, warm);
      if (receivePath === 'both') await once(quorateClient, 'quorate-warm-iter', 0, warm);
      for (let round = 1; round <= rounds; round++) {
        const r = await once(rheaClient, 'rhea', round, n);
        row.rheaSend.push(Math.round((n / r.sendMs) * 1000));
        row.rheaReceive.push(Math.round((n / r.receiveMs) * 1000));
        row.cpu.rheaSend.push(perMsg(r.sendCpuMs));
        row.cpu.rheaReceive.push(perMsg(r.receiveCpuMs));
        addProcessCpu(row, r, n, 'rheaSend', 'rheaReceive');
        const file =
          profileDir === undefined
            ? undefined
            : join(profileDir, `client-quorate-${target}-${round}.cpuprofile`);
        // --receive both: the iterator run goes first in even rounds, so neither path always
        // meets the broker right after rhea's run
        const iterator = async () => {
          const iterFile = file?.replace(/\.cpuprofile$/, '-iterator.cpuprofile');
          const qi = await profiled(iterFile, () => once(quorateClient, 'quorate-iter', round, n));
          row.quorateIteratorReceive.push(Math.round((n / qi.receiveMs) * 1000));
          row.cpu.quorateIteratorReceive.push(perMsg(qi.receiveCpuMs));
          addProcessCpu(row, qi, n, undefined, 'quorateIteratorReceive');
        };
        if (both && round % 2 === 0) await iterator();
        const q = await profiled(file, () => once(mainClient, 'quorate', round, n));
        row.quorateSend.push(Math.round((n / q.sendMs) * 1000));
        row.quorateReceive.push(Math.round((n / q.receiveMs) * 1000));
        row.cpu.quorateSend.push(perMsg(q.sendCpuMs));
        row.cpu.quorateReceive.push(perMsg(q.receiveCpuMs));
        addProcessCpu(row, q, n, 'quorateSend', 'quorateReceive');
        if (both && round % 2 === 1) await iterator();
      }
    } catch (err) {
      row.error = err instanceof Error ? err.message : JSON.stringify(err);
    } finally {
      await broker?.stop().catch(() => undefined);
    }
    log(
      row.error !== undefined
        ? `${row.broker}: failed: ${row.error}`
        : `${row.broker}: rhea send ${fmt(row.rheaSend)}, quorate send ${fmt(row.quorateSend)}, rhea receive ${fmt(row.rheaReceive)}, quorate receive ${fmt(row.quorateReceive)}${both ? `, quorate receive (for await) ${fmt(row.quorateIteratorReceive)}` : ''} msg/s`,
    );
  }

  const ratios: E2eResult['ratios'] = {};
  log('');
  log(
    `${n} x 1 KiB, window ${window}, ${rounds} round(s) after a warm-up of ${warm} per client; msg/s; ratio = quorate / rhea (medians); quorate receives ${receivePath === 'iterator' ? 'with for await' : 'with receive({ max })'}`,
  );
  const iterHead = both ? ' quorate receive (for await) | ratio (for await) |' : '';
  log(
    `| broker | rhea send | quorate send | send ratio | rhea receive | quorate receive | receive ratio |${iterHead}`,
  );
  log(`|---|---|---|---|---|---|---|${both ? '---|---|' : ''}`);
  for (const row of rows) {
    if (row.error !== undefined) {
      log(`| ${row.broker} | failed: ${row.error} |||||| `);
      continue;
    }
    const send = ratio(median(row.quorateSend), median(row.rheaSend));
    const receive = ratio(median(row.quorateReceive), median(row.rheaReceive));
    const iteratorReceive = ratio(median(row.quorateIteratorReceive), median(row.rheaReceive));
    ratios[row.target] = { send, receive, ...(both ? { iteratorReceive } : {}) };
    const iterCells = both ? ` ${fmt(row.quorateIteratorReceive)} | ${iteratorReceive}x |` : '';
    log(
      `| ${row.broker} | ${fmt(row.rheaSend)} | ${fmt(row.quorateSend)} | ${send}x | ${fmt(row.rheaReceive)} | ${fmt(row.quorateReceive)} | ${receive}x |${iterCells}`,
    );
  }
  log('');
  log(
    'client CPU per message (this process, user + system, microseconds; medians; ratio = rhea / quorate: above 1, quorate costs less)',
  );
  log(
    `| broker | rhea send | quorate send | send ratio | rhea receive | quorate receive | receive ratio |${both ? ' quorate receive (for await) | ratio (for await) |' : ''}`,
  );
  log(`|---|---|---|---|---|---|---|${both ? '---|---|' : ''}`);
  for (const row of rows) {
    if (row.error !== undefined) continue;
    const c = row.cpu;
    const us = (xs: number[]) => `${median(xs)}`;
    const iterCells = both
      ? ` ${us(c.quorateIteratorReceive)} | ${ratio(median(c.rheaReceive), median(c.quorateIteratorReceive))}x |`
      : '';
    log(
      `| ${row.broker} | ${us(c.rheaSend)} | ${us(c.quorateSend)} | ${ratio(median(c.rheaSend), median(c.quorateSend))}x | ${us(c.rheaReceive)} | ${us(c.quorateReceive)} | ${ratio(median(c.rheaReceive), median(c.quorateReceive))}x |${iterCells}`,
    );
  }
  logProcessCpu(rows, log);
  const single = rows.find((r) => r.target === 'single' && r.error === undefined);
  const cluster = rows.find((r) => r.target === 'cluster' && r.error === undefined);
  if (single && cluster) {
    log(
      `cluster / single node (quorate client, medians): send ${ratio(median(cluster.quorateSend), median(single.quorateSend))}, receive ${ratio(median(cluster.quorateReceive), median(single.quorateReceive))}`,
    );
  }
  let followerOverLeader: E2eResult['followerOverLeader'];
  if (cluster) {
    followerOverLeader = {
      send: followerOverLeaderCpu(cluster.processCpu.quorateSend),
      receive: followerOverLeaderCpu(cluster.processCpu.quorateReceive),
    };
    log(
      `follower / leader CPU per message (quorate client on the leader, the costlier follower, medians): send ${followerOverLeader.send}, receive ${followerOverLeader.receive}`,
    );
  }
  const rabbitQuorum = rows.find((r) => r.target === 'rabbitmq-quorum' && r.error === undefined);
  let clusterOverRabbitQuorum: E2eResult['clusterOverRabbitQuorum'];
  if (cluster && rabbitQuorum) {
    // issue 34's comparison: our client on our cluster against rhea on RabbitMQ's replicated queue
    clusterOverRabbitQuorum = {
      send: ratio(median(cluster.quorateSend), median(rabbitQuorum.rheaSend)),
      receive: ratio(median(cluster.quorateReceive), median(rabbitQuorum.rheaReceive)),
      quorateSend: ratio(median(cluster.quorateSend), median(rabbitQuorum.quorateSend)),
      quorateReceive: ratio(median(cluster.quorateReceive), median(rabbitQuorum.quorateReceive)),
    };
    const c = clusterOverRabbitQuorum;
    log(
      `quorate cluster / RabbitMQ quorum queue (msg/s, medians): send ${c.send}x, receive ${c.receive}x (quorate client on both: send ${c.quorateSend}x, receive ${c.quorateReceive}x)`,
    );
  }
  return {
    messages: n,
    window,
    rows,
    ratios,
    ...(clusterOverRabbitQuorum !== undefined ? { clusterOverRabbitQuorum } : {}),
    ...(followerOverLeader !== undefined ? { followerOverLeader } : {}),
    ...(profileDir !== undefined ? { profileDir } : {}),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
