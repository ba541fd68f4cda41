/**
 * Brokers for the end-to-end benches, each started on 127.0.0.1 on a free port and stopped by its
 * handle: our broker as its own process (the real CLI), RabbitMQ (one node, or three with a quorum
 * queue), the Qpid Proton C example broker.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { memberV8Flags } from '../../src/cluster-broker/supervisor/member-v8-flags.js';
import { declareQuorumQueue, quorumQueueLeader } from '../../test/support/failover-load.js';
import { startRabbit } from '../../test/support/rabbitmq.js';
import { quorumQueueProcesses } from './broker-processes.js';
import { brokerEntryArgs } from './built-package.js';
import type { CountedProcess } from './process-cpu.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface RunningBroker {
  url: URL;
  /** Its monitoring endpoints, when started with them. */
  httpUrl?: string;
  /** The broker's process id, when it runs as its own process (a cluster: its supervisor's). */
  pid?: number;
  /** A cluster's members, each its own process. */
  members?: ClusterMemberProcess[];
  /**
   * Set by brokers on which a bench's queue must exist before it is used (a RabbitMQ quorum
   * queue): declares queue `name` and says where to reach it and whose CPU to count.
   */
  declareQueue?(name: string): Promise<DeclaredQueue>;
  stop(): Promise<void>;
}

/** A queue declared by `RunningBroker.declareQueue`. */
export interface DeclaredQueue {
  /** The AMQP 1.0 address both clients send to and receive from. */
  address: string;
  /** The node leading the queue: both clients connect there. */
  url: URL;
  /** The broker's processes, labelled by their role for this queue (leader first). */
  processes: CountedProcess[];
}

/** One member of a cluster run by `quorate-broker cluster`, from its `member-ready` line. */
export interface ClusterMemberProcess {
  id: string;
  pid: number;
  url: string;
  httpUrl: string;
}

export async function spawnReady(
  cmd: string,
  args: string[],
): Promise<{ child: ChildProcess; port: number; httpPort?: number }> {
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = await new Promise<{ amqpPort: number; httpPort?: number }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('broker not ready within 30 s')), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const v = JSON.parse(line) as { ready?: boolean; amqpPort?: number; httpPort?: number };
        if (v.ready && typeof v.amqpPort === 'number') {
          clearTimeout(t);
          resolve(v as { amqpPort: number; httpPort?: number });
        }
      } catch {
        // not the ready line
      }
    });
    child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
  });
  return {
    child,
    port: ready.amqpPort,
    ...(ready.httpPort !== undefined ? { httpPort: ready.httpPort } : {}),
  };
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * The Node flags the bench starts the single node with: the V8 flags a supervisor gives a member,
 * by the same rule for the one broker on this host (so the cluster/single ratios compare brokers
 * run alike: without them the single node ran ~10x the full collections,
 * docs/cluster-member.md#single-node-initial-old-space), then `nodeArgs`, which win.
 */
export function singleNodeNodeArgs(nodeArgs: readonly string[]): string[] {
  return [...memberV8Flags(1), ...nodeArgs];
}

/**
 * `nodeArgs` go to Node before the entry (e.g. `--cpu-prof`), after {@link singleNodeNodeArgs}'s
 * flags; `http`: also serve the monitoring endpoints (`--http-port 0`, named in `httpUrl`).
 */
export async function startOurBroker(
  durable = true,
  nodeArgs: string[] = [],
  http = false,
): Promise<RunningBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'qb-bench-'));
  const { child, port, httpPort } = await spawnReady(process.execPath, [
    ...singleNodeNodeArgs(nodeArgs),
    ...(await brokerEntryArgs()),
    '--port',
    '0',
    ...(durable ? ['--data-dir', dir] : []),
    ...(http ? ['--http-port', '0'] : []),
  ]);
  return {
    url: new URL(`amqp://127.0.0.1:${port}`),
    ...(httpPort !== undefined ? { httpUrl: `http://127.0.0.1:${httpPort}` } : {}),
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    async stop() {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The paced source (bench/lib/paced-peer.ts) as its own process: `pace` msg/s (0: as fast as
 * credit allows), released every `tickMs` ms. It sends messages of its own, so nothing fills it.
 */
export async function startPacedPeer(pace: number, tickMs: number): Promise<RunningBroker> {
  const { child, port } = await spawnReady(process.execPath, [
    '--import',
    'tsx',
    join(root, 'bench', 'lib', 'paced-peer.ts'),
    '--pace',
    String(pace),
    '--tick-ms',
    String(tickMs),
  ]);
  return {
    url: new URL(`amqp://127.0.0.1:${port}`),
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    stop: () => stopChild(child),
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export async function startProtonBroker(bin: string): Promise<RunningBroker> {
  const port = await freePort();
  const child = spawn(bin, ['127.0.0.1', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('proton broker not listening')), 10_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (l.includes('listening')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return {
    url: new URL(`amqp://127.0.0.1:${port}`),
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    stop: () => stopChild(child),
  };
}

/** Installs Debian packages that are missing (root, apt): the bench brings its own peers. */
export function aptEnsure(packages: Array<{ pkg: string; present: () => boolean }>): void {
  const missing = packages.filter((p) => !p.present()).map((p) => p.pkg);
  if (missing.length === 0) return;
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

const PROTON_EXAMPLES = '/usr/share/proton/examples/c';

/**
 * The Qpid Proton C example broker (`broker.c` from libqpid-proton11-dev-examples), compiled with
 * gcc against libqpid-proton11-dev into a cache dir under the OS temp dir; returns the binary.
 */
export function buildProtonBroker(): string {
  aptEnsure([
    { pkg: 'libqpid-proton11-dev-examples', present: () => existsSync(join(PROTON_EXAMPLES, 'broker.c')) },
    { pkg: 'libqpid-proton11-dev', present: () => existsSync('/usr/include/proton/proactor.h') },
    { pkg: 'gcc', present: () => existsSync('/usr/bin/gcc') },
  ]);
  const out = join(tmpdir(), 'quorate-bench-proton');
  const bin = join(out, 'broker');
  if (!existsSync(bin)) {
    mkdirSync(out, { recursive: true });
    execFileSync(
      'gcc',
      [
        '-O2',
        '-o',
        bin,
        join(PROTON_EXAMPLES, 'broker.c'),
        `-I${PROTON_EXAMPLES}`,
        '-lqpid-proton',
        '-lpthread',
      ],
      { stdio: 'inherit' },
    );
  }
  return bin;
}

/**
 * A 3-member reference cluster (real processes, fsync), run by `quorate-broker cluster` in its own
 * process: the members dial each other directly. (startCluster()'s loopback proxies would run in
 * this process, the benchmark's client process, and the client profile showed them taking as
 * much of its event loop during the receive phase as the receiver itself.) `nodeArgs` go to the
 * supervisor's Node, which starts each member with the same flags; `brokerArgs` to
 * `quorate-broker cluster` (e.g. `--cluster-id`, `--federation`). Resolves once every member
 * serves (elected, caught up: GET /readyz 200). `onLogLine`: the cluster's log (stderr, one
 * `[member] line` per entry) goes there instead of this process's stderr, at `logLevel`.
 */
export async function startOurCluster(
  nodeArgs: string[] = [],
  brokerArgs: string[] = [],
  log?: { onLogLine: (line: string) => void; logLevel: 'debug' | 'info' | 'warn' | 'error' },
): Promise<RunningBroker & { urls: string[]; httpUrls: string[]; members: ClusterMemberProcess[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'qc-bench-'));
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...(await brokerEntryArgs()),
      'cluster',
      '--nodes',
      '3',
      '--base-port',
      '0',
      '--http-base-port',
      '0',
      '--data-dir',
      dir,
      '--log-level',
      log?.logLevel ?? 'error',
      ...brokerArgs,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', log ? 'pipe' : 'inherit'] },
  );
  if (log && child.stderr) createInterface({ input: child.stderr }).on('line', log.onLogLine);
  const stop = async () => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const members = await new Promise<ClusterMemberProcess[]>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('cluster not ready within 90 s')), 90_000);
      const ready = new Map<string, ClusterMemberProcess>();
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const v = JSON.parse(line) as Partial<ClusterMemberProcess> & { event?: string };
          if (v.event === 'member-ready' && v.id && v.url && v.httpUrl && typeof v.pid === 'number') {
            ready.set(v.id, { id: v.id, pid: v.pid, url: v.url, httpUrl: v.httpUrl });
          } else if (v.event === 'cluster-ready') {
            clearTimeout(t);
            resolve([...ready.values()]);
          }
        } catch {
          // not a JSON line
        }
      });
      child.once('exit', (code) => reject(new Error(`cluster exited with ${code}`)));
    });
    const deadline = Date.now() + 90_000;
    for (const m of members) {
      while (!(await readyz(m.httpUrl))) {
        if (Date.now() > deadline) throw new Error(`member ${m.url} did not serve within 90 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const urls = members.map((m) => m.url);
    const httpUrls = members.map((m) => m.httpUrl);
    return {
      url: new URL(urls[0]!),
      urls,
      httpUrls,
      members,
      ...(child.pid !== undefined ? { pid: child.pid } : {}),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function readyz(httpUrl: string): Promise<boolean> {
  try {
    const res = await fetch(new URL('/readyz', httpUrl), { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

const ensureRabbit = () =>
  aptEnsure([{ pkg: 'rabbitmq-server', present: () => existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server') }]);

/** One RabbitMQ 3.10 node (AMQP 1.0 plugin; classic queues by plain name). */
export async function startRabbitBroker(): Promise<RunningBroker> {
  ensureRabbit();
  const rabbit = await startRabbit(1);
  return { url: new URL(rabbit.urls[0]!), pid: rabbit.nodes[0]!.pid(), stop: () => rabbit.stop() };
}

/**
 * A 3-node RabbitMQ 3.10 cluster whose queues are quorum queues on all three nodes: each is
 * declared over AMQP 0-9-1 before use (a plain AMQP 1.0 address would make a classic queue) and
 * addressed as `/amq/queue/NAME`; its CPU is counted per node (`beam.smp`), labelled by the node's
 * role for that queue (`leader rabbit1`, `follower rabbit2`...).
 */
export async function startRabbitQuorumCluster(): Promise<RunningBroker> {
  ensureRabbit();
  const rabbit = await startRabbit(3);
  try {
    const nodes = rabbit.nodes.map((n) => ({ name: n.name, pid: n.pid(), url: new URL(n.url) }));
    return {
      url: nodes[0]!.url,
      async declareQueue(name) {
        await declareQuorumQueue(rabbit, name);
        const leader = await quorumQueueLeader(rabbit, name);
        const leaderNode = nodes.find((n) => n.name === leader);
        if (leaderNode === undefined)
          throw new Error(`quorum queue ${name}: leader ${leader} is not a node of ours`);
        return {
          address: `/amq/queue/${name}`,
          url: leaderNode.url,
          processes: quorumQueueProcesses(nodes, leader),
        };
      },
      stop: () => rabbit.stop(),
    };
  } catch (err) {
    await rabbit.stop();
    throw err;
  }
}
