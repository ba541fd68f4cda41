/**
 * Starts RabbitMQ 3.10 nodes (Debian `rabbitmq-server`, AMQP 1.0 plugin) without systemd, bound to
 * 127.0.0.1 on free ports, with their data under the OS temp dir, and stops them by PID.
 * How it is installed and run: CONTRIBUTING.md#rabbitmq.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from './net.js';

const RABBIT_BIN = '/usr/lib/rabbitmq/bin';
const run = promisify(execFile);

export interface RabbitNode {
  name: string;
  amqpPort: number;
  url: string;
  /** beam.smp pid, from the node's pid file once it is up. */
  pid(): number;
  kill(): Promise<void>;
  start(): Promise<void>;
  ctl(...args: string[]): Promise<string>;
}

export interface RabbitCluster {
  nodes: RabbitNode[];
  urls: string[];
  stop(): Promise<void>;
}

interface NodeDirs {
  base: string;
  home: string;
}

export function rabbitInstalled(): boolean {
  return existsSync(join(RABBIT_BIN, 'rabbitmq-server'));
}

function nodeEnv(dirs: NodeDirs, name: string, amqpPort: number, distPort: number, epmdPort: number) {
  const nodeDir = join(dirs.base, name);
  return {
    ...process.env,
    HOME: dirs.home,
    RABBITMQ_CONF_ENV_FILE: '/dev/null',
    RABBITMQ_NODENAME: `${name}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: join(nodeDir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(nodeDir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(nodeDir, 'mnesia'),
    RABBITMQ_MNESIA_DIR: join(nodeDir, 'mnesia', name),
    RABBITMQ_LOG_BASE: join(nodeDir, 'log'),
    RABBITMQ_PID_FILE: join(nodeDir, 'pid'),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS:
      '-kernel inet_dist_use_interface {127,0,0,1} +sbwt none +sbwtdcpu none +sbwtdio none',
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
  };
}

async function makeNode(dirs: NodeDirs, name: string, epmdPort: number): Promise<RabbitNode> {
  const amqpPort = await freePort();
  const distPort = await freePort();
  const nodeDir = join(dirs.base, name);
  mkdirSync(join(nodeDir, 'log'), { recursive: true });
  writeFileSync(
    join(nodeDir, 'rabbitmq.conf'),
    [
      `listeners.tcp.1 = 127.0.0.1:${amqpPort}`,
      'loopback_users = none',
      'log.console = false',
      'log.file.level = info',
      'disk_free_limit.absolute = 50MB',
      '',
    ].join('\n'),
  );
  writeFileSync(join(nodeDir, 'enabled_plugins'), '[rabbitmq_amqp1_0].\n');
  const env = nodeEnv(dirs, name, amqpPort, distPort, epmdPort);
  const logFile = join(nodeDir, 'log', `${name}@localhost.log`);
  let child: ChildProcess | undefined;
  let startedOnce = false;

  const node: RabbitNode = {
    name,
    amqpPort,
    url: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
    pid() {
      return Number(readFileSync(env.RABBITMQ_PID_FILE, 'utf8').trim());
    },
    async start() {
      // Each start appends to the log: readiness is a NEW "Server startup complete" line.
      const before = existsSync(logFile) ? countStartups(readFileSync(logFile, 'utf8')) : 0;
      child = spawn(join(RABBIT_BIN, 'rabbitmq-server'), [], {
        env,
        detached: true, // its own process group (setsid-like), so it outlives nothing of ours
        stdio: 'ignore',
      });
      child.unref();
      await waitFor(() => existsSync(logFile) && countStartups(readFileSync(logFile, 'utf8')) > before, {
        timeoutMs: 120_000,
        what: `RabbitMQ ${name} startup`,
      });
      startedOnce = true;
    },
    async kill() {
      if (!startedOnce) return;
      let pid: number | undefined;
      try {
        pid = node.pid();
      } catch {
        pid = undefined;
      }
      if (pid) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
        await waitFor(() => !alive(pid as number), { timeoutMs: 30_000, what: `${name} exit` });
      }
    },
    async ctl(...args: string[]) {
      const { stdout } = await run(join(RABBIT_BIN, 'rabbitmqctl'), ['-n', `${name}@localhost`, ...args], {
        env,
        timeout: 120_000,
      });
      return stdout;
    },
  };
  return node;
}

function countStartups(log: string): number {
  return log.split('Server startup complete').length - 1;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `count` nodes; with count > 1 they are joined into one cluster. */
export async function startRabbit(count = 1): Promise<RabbitCluster> {
  if (!rabbitInstalled()) {
    throw new Error('rabbitmq-server is not installed: apt-get install -y rabbitmq-server (see README)');
  }
  const base = await mkdtemp(join(tmpdir(), 'quorate-rabbit-'));
  const home = join(base, 'home');
  mkdirSync(home, { recursive: true });
  const cookie = join(home, '.erlang.cookie');
  writeFileSync(cookie, `QUORATETEST${Math.random().toString(36).slice(2).toUpperCase()}`);
  chmodSync(cookie, 0o400);
  const epmdPort = await freePort();
  const dirs = { base, home };
  const nodes: RabbitNode[] = [];
  for (let i = 1; i <= count; i++) nodes.push(await makeNode(dirs, `rabbit${i}`, epmdPort));
  const epmdPids = new Set<number>();
  const stop = async () => {
    for (const n of nodes) await n.kill();
    // The private epmd (one per ERL_EPMD_PORT) was started by the first node: stop it by PID.
    for (const pid of findEpmd(epmdPort)) epmdPids.add(pid);
    for (const pid of epmdPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await rm(base, { recursive: true, force: true });
  };
  const watchdog = startWatchdog(base);
  const stopAll = async (): Promise<void> => {
    await stop();
    watchdog.kill('SIGKILL');
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    // the private epmd was started by the first node: the watchdog needs its PID too
    writeFileSync(join(base, EPMD_PIDS), findEpmd(epmdPort).join('\n'));
    for (const n of nodes.slice(1)) {
      await n.ctl('stop_app');
      await n.ctl('join_cluster', `${nodes[0].name}@localhost`);
      await n.ctl('start_app');
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  return { nodes, urls: nodes.map((n) => n.url), stop: stopAll };
}

/** Where the epmd PIDs are written for the watchdog (one per line). */
const EPMD_PIDS = 'epmd.pids';

/**
 * The nodes run in their own process groups, so a test process that dies without calling
 * `stop()` (killed by a timeout, Ctrl-C, a crashed worker) would leave them running. A detached
 * shell watches this process and, once it is gone, stops what the run started by the PIDs it wrote
 * (each node's pid file, the epmd PIDs) and removes the run's directory. `stop()` kills it first.
 */
function startWatchdog(base: string): ChildProcess {
  const script = [
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done',
    'for f in "$2"/*/pid "$2"/' + EPMD_PIDS + '; do',
    '  [ -f "$f" ] && for pid in $(cat "$f"); do kill -9 "$pid" 2>/dev/null; done',
    'done',
    'rm -rf "$2"',
  ].join('\n');
  const child = spawn('sh', ['-c', script, 'quorate-rabbit-watchdog', String(process.pid), base], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child;
}

/** PIDs of the epmd listening on our private port (found via /proc, matched by its port flag). */
function findEpmd(port: number): number[] {
  const pids: number[] = [];
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes('epmd') && environ.includes(`ERL_EPMD_PORT=${port}\0`)) pids.push(Number(entry));
    } catch {
      // process vanished or not readable
    }
  }
  return pids;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
