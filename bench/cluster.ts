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
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import rhea from 'rhea';
import { ensureClusterSecret } from '../src/cluster-broker/replication/index.js';
import { freePort } from '../test/support/net.js';
import { brokerEntryArgs } from './lib/built-package.js';
import { flagValue } from './lib/flag-value.js';
import {
  type CountedProcess,
  type CpuSnapshot,
  cpuPerMessageUs,
  cpuSnapshot,
  formatCpuPerMessage,
} from './lib/process-cpu.js';

export interface ClusterBenchOptions {
  /** Messages sent, then received, per target (default 20000). */
  messages?: number;
  /** Body size (default 1024). */
  bytes?: number;
  /** Kill -9 the leader this many times (default 5; 0 skips). */
  failovers?: number;
  log?: (line: string) => void;
}

export interface Throughput {
  target: string;
  messages: number;
  /** Times the sender had to reconnect and re-send (a leader change during the run). */
  reconnects: number;
  sendPerSecond: number;
  receivePerSecond: number;
  /** messages / (send time + receive time) */
  sendThenReceivePerSecond: number;
  /**
   * CPU per message (microseconds, from the OS) of each process in the send and in the receive
   * phase: `client` (this process, rhea) and the broker (`broker`, or `leader n1`, `follower n2`...).
   */
  cpuUs: { send: Record<string, number | null>; receive: Record<string, number | null> };
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

function connect(port: number): Promise<rhea.Connection> {
  const c = rhea
    .create_container()
    .connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  return new Promise((resolve, reject) => {
    c.once('connection_open', () => resolve(c));
    c.once('connection_close', () => reject(new Error('closed before open')));
    c.once('disconnected', () => reject(new Error('disconnected before open')));
  });
}

function closeError(c: rhea.Connection): string {
  const e = (
    c as unknown as { remote?: { close?: { error?: { condition?: string; description?: string } } } }
  ).remote?.close?.error;
  return e ? `${e.condition}: ${e.description}` : 'no error';
}

function close(c: rhea.Connection): Promise<void> {
  return new Promise((resolve) => {
    if (!c.is_open()) return resolve();
    c.once('connection_close', () => resolve());
    c.once('disconnected', () => resolve());
    c.close();
  });
}

/**
 * Sends messages `tag-0..n-1` (message-id = its name) and resolves once every one was accepted.
 * Like a failover client: when the broker closes the connection (a leader change under load:
 * outcome unknown), it reconnects and re-sends what was not yet accepted, with the same
 * message-ids (the broker's dedup keeps each once).
 */
async function sendN(
  port: number,
  address: string,
  n: number,
  body: Buffer,
  tag: string,
): Promise<SendStats> {
  const t0 = performance.now();
  const accepted = new Set<number>();
  let reconnects = 0;
  for (;;) {
    const c = await connect(port).catch(() => undefined);
    if (c) {
      const ok = await sendOnce(c, address, n, body, tag, accepted);
      void close(c);
      if (ok) return { seconds: (performance.now() - t0) / 1000, reconnects };
    }
    reconnects++;
    if (performance.now() - t0 > 300_000) throw new Error(`send did not finish: ${accepted.size}/${n}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface SendStats {
  seconds: number;
  reconnects: number;
}

/** One connection's worth of sending; false when the connection closed before all were accepted. */
function sendOnce(
  c: rhea.Connection,
  address: string,
  n: number,
  body: Buffer,
  tag: string,
  accepted: Set<number>,
): Promise<boolean> {
  return new Promise((resolve) => {
    const s = c.open_sender({ target: { address } });
    let next = 0;
    s.on('sendable', () => {
      while (s.sendable()) {
        while (next < n && accepted.has(next)) next++;
        if (next >= n) return;
        const i = next++;
        const d = s.send({ message_id: `${tag}-${i}`, body: rhea.message.data_section(body) });
        (d as unknown as { index: number }).index = i;
      }
    });
    s.on('accepted', (ctx) => {
      accepted.add((ctx.delivery as unknown as { index: number }).index);
      if (accepted.size === n) {
        s.close();
        resolve(true);
      }
    });
    s.on('rejected', () => resolve(false));
    s.on('released', () => resolve(false));
    c.once('connection_close', () => resolve(false));
    c.once('disconnected', () => resolve(false));
  });
}

/** Receives n messages (auto-accept, credit window 1000); resolves with the seconds it took. */
function receiveN(c: rhea.Connection, address: string, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const r = c.open_receiver({ source: { address }, credit_window: 1000, autoaccept: true });
    let got = 0;
    r.on('message', () => {
      if (++got === n) {
        const secs = (performance.now() - t0) / 1000;
        r.close();
        resolve(secs);
      }
    });
    c.once('connection_close', () =>
      reject(new Error(`connection closed after ${got}/${n}: ${closeError(c)}`)),
    );
  });
}

export async function measure(
  port: number,
  target: string,
  n: number,
  bytes: number,
  counted: readonly CountedProcess[] = [{ label: 'client' }],
): Promise<Throughput> {
  const body = Buffer.alloc(bytes, 7);
  const address = `bench-${target}`;
  // warm-up (JIT, queue creation), not counted
  await sendN(port, address, 200, body, `${target}-warm`);
  const w = await connect(port);
  await receiveN(w, address, 200);
  await close(w);
  const s0 = cpuSnapshot(counted);
  const sent = await sendN(port, address, n, body, target);
  const s1 = cpuSnapshot(counted);
  const sendS = sent.seconds;
  const d = await connect(port);
  const recvS = await receiveN(d, address, n);
  const s2 = cpuSnapshot(counted);
  await close(d);
  const perMessage = (a: CpuSnapshot, b: CpuSnapshot) => Object.fromEntries(cpuPerMessageUs(a, b, n));
  return {
    target,
    messages: n,
    reconnects: sent.reconnects,
    sendPerSecond: Math.round(n / sendS),
    receivePerSecond: Math.round(n / recvS),
    sendThenReceivePerSecond: Math.round(n / (sendS + recvS)),
    cpuUs: { send: perMessage(s0, s1), receive: perMessage(s1, s2) },
  };
}

/** The CPU lines under a target's rates. */
function logCpu(t: Throughput, log: (line: string) => void): void {
  log(`    CPU per message, send:    ${formatCpuPerMessage(new Map(Object.entries(t.cpuUs.send)))}`);
  log(`    CPU per message, receive: ${formatCpuPerMessage(new Map(Object.entries(t.cpuUs.receive)))}`);
}

function waitReady(proc: ChildProcess, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const v = JSON.parse(line) as { ready?: boolean; amqpPort?: number };
        if (v.ready && typeof v.amqpPort === 'number') resolve(v.amqpPort);
      } catch {
        // not the ready line
      }
    });
    proc.once('exit', (code) => reject(new Error(`${what} exited (${code})`)));
  });
}

async function startSingleNode(dataDir: string): Promise<{ port: number; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [...(await brokerEntryArgs()), '--port', '0', '--data-dir', dataDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return { port: await waitReady(proc, 'single node'), proc };
}

/**
 * A 3-member cluster of `quorate-broker node` processes (no proxies), with kill -9 / restart.
 * `secret: false` runs it without a cluster secret (`--insecure-no-secret`, allowed on loopback
 * only), to measure what authentication costs.
 */
export class BenchCluster {
  readonly ids = ['n1', 'n2', 'n3'];
  readonly amqp = new Map<string, number>();
  private readonly procs = new Map<string, ChildProcess>();
  private peers = '';
  private readonly cluster = new Map<string, number>();
  private secretFile: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly options: { secret?: boolean } = {},
  ) {}

  async start(): Promise<void> {
    // authenticated like a production cluster: every member connection proves the secret
    if (this.options.secret !== false) this.secretFile = await ensureClusterSecret(this.dir);
    for (const id of this.ids) {
      this.amqp.set(id, await freePort());
      this.cluster.set(id, await freePort());
    }
    this.peers = this.ids.map((id) => `${id}=127.0.0.1:${this.cluster.get(id)}`).join(',');
    await Promise.all(this.ids.map((id) => this.spawn(id)));
  }

  async spawn(id: string): Promise<void> {
    const args = [
      ...(await brokerEntryArgs()),
      'node',
      '--id',
      id,
      '--port',
      String(this.amqp.get(id)),
      '--cluster-port',
      String(this.cluster.get(id)),
      '--peers',
      this.peers,
      '--data-dir',
      path.join(this.dir, id),
      ...(this.secretFile !== undefined
        ? ['--cluster-secret-file', this.secretFile]
        : ['--insecure-no-secret']),
    ];
    const proc = spawn(process.execPath, args, {
      stdio: ['pipe', 'pipe', process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore'],
    });
    this.procs.set(id, proc);
    await waitReady(proc, `member ${id}`);
  }

  /** The member's process id while it runs. */
  pid(id: string): number | undefined {
    return this.procs.get(id)?.pid;
  }

  /** The client (this process) and each member, labelled by its role given the leader's id. */
  countedProcesses(leader: string): CountedProcess[] {
    const members: CountedProcess[] = [];
    for (const id of [leader, ...this.ids.filter((x) => x !== leader)]) {
      const pid = this.pid(id);
      if (pid !== undefined) members.push({ label: `${id === leader ? 'leader' : 'follower'} ${id}`, pid });
    }
    return [{ label: 'client' }, ...members];
  }

  async kill(id: string): Promise<void> {
    const p = this.procs.get(id);
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.procs.values()].map((p) => {
        if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
        const gone = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        return gone;
      }),
    );
  }
}

/** The member every asked member names as leader in its Open (itself serving), or undefined. */
async function leaderOf(c: BenchCluster, among = c.ids): Promise<string | undefined> {
  const seen = await Promise.all(
    among.map(async (id) => {
      try {
        const conn = await connect(c.amqp.get(id)!);
        const props = (conn as unknown as { remote: { open: { properties?: Record<string, unknown> } } })
          .remote.open.properties;
        void close(conn);
        const list = (props?.['failover-server-list'] ?? []) as Record<string, unknown>[];
        const self = list.find((m) => m['quorate:member-id'] === id);
        if (self?.['quorate:quorate'] !== true) return undefined;
        return list.find((m) => m['quorate:leader'] === true)?.['quorate:member-id'] as string | undefined;
      } catch {
        return undefined;
      }
    }),
  );
  const l = seen[0];
  return l !== undefined && among.includes(l) && seen.every((s) => s === l) ? l : undefined;
}

export async function waitLeader(c: BenchCluster, among = c.ids): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const l = await leaderOf(c, among);
    if (l) return l;
    if (Date.now() > deadline) throw new Error('no leader');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One write through `port` on a fresh connection; resolves true when accepted. */
async function tryWrite(port: number, tag: string): Promise<boolean> {
  try {
    const c = await connect(port);
    try {
      return await Promise.race([
        sendOnce(c, 'bench-failover', 1, Buffer.from('x'), tag, new Set()),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000)),
      ]);
    } finally {
      void close(c);
    }
  } catch {
    return false;
  }
}

async function failovers(c: BenchCluster, trials: number, log: (line: string) => void): Promise<number[]> {
  const out: number[] = [];
  for (let t = 0; t < trials; t++) {
    const leader = await waitLeader(c);
    const ports = c.ids.filter((x) => x !== leader).map((id) => c.amqp.get(id)!);
    const t0 = performance.now();
    await c.kill(leader);
    // a client that writes through the surviving members until a write is accepted
    let i = 0;
    while (!(await tryWrite(ports[i++ % ports.length]!, `fo-${t}-${i}`))) {
      if (performance.now() - t0 > 60_000) throw new Error('no new leader within 60 s');
    }
    const ms = performance.now() - t0;
    out.push(ms);
    log(`  failover ${t + 1}: ${Math.round(ms)} ms (killed leader ${leader})`);
    await c.spawn(leader);
    await waitLeader(c);
  }
  return out;
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
