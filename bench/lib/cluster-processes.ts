/**
 * The cluster bench's brokers (bench/cluster.ts, bench/cluster-auth.ts), each a `quorate-broker`
 * process: a single node, and a 3-member cluster of `node` processes dialling each other directly,
 * with kill -9 and restart of a member, and which member leads as the members name it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ensureClusterSecret } from '../../src/cluster-broker/replication/index.js';
import { freePort } from '../../test/support/net.js';
import { brokerEntryArgs } from './built-package.js';
import { close, connect } from './cluster-rhea-client.js';
import type { CountedProcess } from './process-cpu.js';

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

export async function startSingleNode(dataDir: string): Promise<{ port: number; proc: ChildProcess }> {
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
