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
import {
  buildProtonBroker,
  type RunningBroker,
  startOurBroker,
  startOurCluster,
  startProtonBroker,
  startRabbitBroker,
  startRabbitQuorumCluster,
} from './lib/brokers.js';
import {
  type BenchClient,
  type PhaseTimes,
  quorateBatchClient,
  quorateClient,
  rheaClient,
} from './lib/clients.js';
import { flagValue } from './lib/flag-value.js';
import { cpuPerMessageUs } from './lib/process-cpu.js';
import { profiled } from './lib/profile.js';
import { defaultWarm, parseWarm } from './lib/warm-option.js';

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

export type TargetName = 'single' | 'cluster' | 'rabbitmq' | 'proton' | 'rabbitmq-quorum';
type ReceivePath = 'batch' | 'iterator' | 'both';
const TARGETS: Record<TargetName, string> = {
  single: 'quorate-broker, one node, durable',
  cluster: 'quorate-broker, 3 members',
  rabbitmq: 'RabbitMQ 3.10, classic queue',
  proton: 'Qpid Proton C example broker',
  'rabbitmq-quorum': 'RabbitMQ 3.10, quorum queue, 3 nodes',
};
/** Without --targets: every target but the RabbitMQ cluster, which only runs when named. */
const DEFAULT_TARGETS: TargetName[] = ['single', 'cluster', 'rabbitmq', 'proton'];
/** Every target, in the order the tables print them. */
export const ALL_TARGETS = Object.keys(TARGETS) as TargetName[];

export interface E2eRow {
  target: TargetName;
  broker: string;
  /** msg/s per round */
  rheaSend: number[];
  quorateSend: number[];
  rheaReceive: number[];
  /** with the receive path chosen (both: batch) */
  quorateReceive: number[];
  /** `--receive both`: the iterator path's receive, same rounds */
  quorateIteratorReceive: number[];
  /** this process's CPU per message (user + system, microseconds), per round and phase */
  cpu: {
    rheaSend: number[];
    quorateSend: number[];
    rheaReceive: number[];
    quorateReceive: number[];
    quorateIteratorReceive: number[];
  };
  /**
   * CPU per message (microseconds, from the OS) of every process, per phase, per round, by the
   * process's label: `client` (this process) and the broker's (`broker`, or a cluster's members
   * by role: `leader n1`, `follower n2`...).
   */
  processCpu: Record<CpuPhase, Record<string, number[]>>;
  error?: string;
}

type CpuPhase = keyof E2eRow['cpu'];
const PHASES: Record<CpuPhase, string> = {
  rheaSend: 'rhea send',
  quorateSend: 'quorate send',
  rheaReceive: 'rhea receive',
  quorateReceive: 'quorate receive',
  quorateIteratorReceive: 'quorate receive (for await)',
};

/** Adds one run's per-process CPU per message to the row's send and receive phases. */
function addProcessCpu(row: E2eRow, t: PhaseTimes, n: number, send: CpuPhase | undefined, receive: CpuPhase) {
  if (t.snapshots === undefined) return;
  const [s0, s1, s2] = t.snapshots;
  const add = (phase: CpuPhase, us: Map<string, number | null>) => {
    for (const [label, v] of us) {
      if (v === null) continue;
      const byLabel = row.processCpu[phase];
      byLabel[label] ??= [];
      byLabel[label].push(v);
    }
  };
  if (send !== undefined) add(send, cpuPerMessageUs(s0, s1, n));
  add(receive, cpuPerMessageUs(s1, s2, n));
}

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

async function startTarget(target: TargetName, brokerNodeArgs: string[]): Promise<RunningBroker> {
  switch (target) {
    case 'single':
      return startOurBroker(true, brokerNodeArgs);
    case 'cluster':
      return startOurCluster(brokerNodeArgs);
    case 'rabbitmq':
      return startRabbitBroker();
    case 'proton':
      return startProtonBroker(buildProtonBroker());
    case 'rabbitmq-quorum':
      return startRabbitQuorumCluster();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor((s.length - 1) / 2)]!;
};
const fmt = (xs: number[]) => {
  if (xs.length === 0) return '-';
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? k(lo) : `${k(lo)}-${k(hi)}`;
};
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);

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

/** One table per broker: each phase's CPU per message in each process, medians over the rounds. */
function logProcessCpu(rows: E2eRow[], log: (line: string) => void): void {
  for (const row of rows) {
    if (row.error !== undefined) continue;
    const labels = [
      ...new Set(Object.values(row.processCpu).flatMap((byLabel) => Object.keys(byLabel))),
    ].sort((a, b) => processOrder(a) - processOrder(b) || a.localeCompare(b));
    if (labels.length === 0) continue;
    log('');
    const roles =
      row.target === 'cluster' ? '; the leader serves the client, the followers only replicate' : '';
    log(
      `CPU per message by process, ${row.broker} (from the OS, user + system, microseconds; medians${roles})`,
    );
    log(`| phase | ${labels.join(' | ')} | all processes |`);
    log(`|---|${labels.map(() => '---|').join('')}---|`);
    for (const phase of Object.keys(PHASES) as CpuPhase[]) {
      const byLabel = row.processCpu[phase];
      if (Object.keys(byLabel).length === 0) continue;
      const cells = labels.map((l) => (byLabel[l] === undefined ? undefined : median(byLabel[l])));
      const total = cells.every((c) => c !== undefined)
        ? (cells as number[]).reduce((a, b) => a + b, 0).toFixed(1)
        : '-';
      log(
        `| ${PHASES[phase]} | ${cells.map((c) => (c === undefined ? '-' : c.toFixed(1))).join(' | ')} | ${total} |`,
      );
    }
  }
}

/**
 * One phase of a cluster: the costlier follower's median CPU per message over the leader's (every
 * round the leader's, whichever member led), rounded to 0.01; 0 without both.
 */
export function followerOverLeaderCpu(byLabel: Record<string, number[]>): number {
  const labels = Object.keys(byLabel);
  const leader = median(labels.filter((l) => l.startsWith('leader')).flatMap((l) => byLabel[l]!));
  const followers = labels.filter((l) => l.startsWith('follower')).map((l) => median(byLabel[l]!));
  return followers.length === 0 ? 0 : ratio(Math.max(...followers), leader);
}

/** client first, then a cluster's leader, then the rest by name. */
const processOrder = (label: string) => (label === 'client' ? 0 : label.startsWith('leader') ? 1 : 2);

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
