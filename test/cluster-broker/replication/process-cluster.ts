/**
 * Test/bench harness: replication members as separate processes (demo-member.ts) over TCP with
 * real files. Waits on readiness lines, never on fixed sleeps; kills by PID only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const memberScript = path.resolve(here, 'demo-member.ts');

export interface Reply {
  id: number;
  ok: boolean;
  [key: string]: unknown;
}

export interface Status extends Reply {
  role: string;
  term: number;
  leaderId: string | null;
  commit: number;
  applied: number;
  last: number;
  quorate: boolean;
  /** Why the member is still recovering (it neither votes nor counts toward commit), or null. */
  recovering: string | null;
  count: number;
  restores: number;
}

export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export class MemberProcess {
  child: ChildProcess | undefined;
  pid = 0;
  private nextId = 1;
  private pending = new Map<number, (r: Reply) => void>();
  private exitPromise: Promise<void> = Promise.resolve();
  readonly stderr: string[] = [];
  /** The member's last events (role changes, errors, its exit), for a failed wait's message. */
  readonly events: string[] = [];

  constructor(
    readonly id: string,
    readonly dir: string,
    private readonly args: string[],
  ) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Spawn and wait for the ready line. */
  async start(timeoutMs = 30_000): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', memberScript, ...this.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pid = child.pid!;
    this.exitPromise = new Promise((resolve) => child.once('exit', () => resolve()));
    // a request racing a kill -9 writes into a closed pipe: EPIPE is that member's exit, not a
    // test failure; the exit handler below answers the request
    child.stdin!.on('error', () => {});
    child.stderr!.on('data', (b: Buffer) => {
      this.stderr.push(b.toString());
      if (this.stderr.length > 50) this.stderr.shift();
    });
    let onReady!: () => void;
    const ready = new Promise<void>((resolve) => {
      onReady = resolve;
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (msg.event === 'ready') onReady();
      if (typeof msg.event === 'string') this.remember(line);
      if (typeof msg.id === 'number') {
        const cb = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        cb?.(msg as unknown as Reply);
      }
    });
    const exited = this.exitPromise.then(() => {
      throw new Error(`${this.id} exited before ready: ${this.stderr.join('')}`);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.id} not ready in ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([ready, exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
    child.once('exit', (code, signal) => {
      this.remember(`exited: code ${code} signal ${signal}`);
      if (this.child === child) this.child = undefined;
      for (const cb of this.pending.values()) cb({ id: -1, ok: false, error: 'exited' });
      this.pending.clear();
    });
  }

  /** What this member said and did lately, for a failed wait's message. */
  describe(): string {
    const err = this.stderr.join('').slice(-500);
    return `${this.id} (${this.running ? 'running' : 'not running'}): ${this.events.join(' | ')}${err ? ` stderr: ${err}` : ''}`;
  }

  private remember(event: string): void {
    this.events.push(event);
    if (this.events.length > 8) this.events.shift();
  }

  request<T extends Reply = Reply>(cmd: Record<string, unknown>): Promise<T> {
    const child = this.child;
    if (!child) return Promise.resolve({ id: -1, ok: false, error: 'not running' } as unknown as T);
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.pending.set(id, resolve as (r: Reply) => void);
      child.stdin!.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  status(): Promise<Status> {
    return this.request<Status>({ op: 'status' });
  }

  async dump(): Promise<string[]> {
    const r = await this.request({ op: 'dump' });
    return r.values as string[];
  }

  /** kill -9 by PID, and wait for the exit. */
  async kill9(): Promise<void> {
    if (!this.child) return;
    process.kill(this.pid, 'SIGKILL');
    await this.exitPromise;
  }

  /** SIGSTOP / SIGCONT by PID (a paused, not crashed, member). */
  pause(): void {
    if (this.child) process.kill(this.pid, 'SIGSTOP');
  }

  resume(): void {
    if (this.child) process.kill(this.pid, 'SIGCONT');
  }

  /** Close stdin (the member closes cleanly) and wait. */
  async stop(): Promise<void> {
    if (!this.child) return;
    this.child.stdin!.end();
    await this.exitPromise;
  }
}

export interface ProcessClusterOptions {
  size?: number;
  groupCommit?: boolean;
  snapshotEvery?: number;
  electionMin?: number;
  electionMax?: number;
  heartbeat?: number;
  /** Listening ports of the members (default: free ports). */
  ports?: number[];
  /** A member's `--peers` value (default: every member at its own port), e.g. via a ProxyMesh. */
  peersArg?: (id: string) => string;
}

export class ProcessCluster {
  readonly members: MemberProcess[] = [];
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  static async create(opts: ProcessClusterOptions = {}): Promise<ProcessCluster> {
    const n = opts.size ?? 3;
    const root = mkdtempSync(path.join(os.tmpdir(), 'quorate-repl-'));
    const c = new ProcessCluster(root);
    const ports = opts.ports ?? (await freePorts(n));
    const ids = ports.map((_, i) => `n${i + 1}`);
    const direct = ids.map((id, i) => `${id}=127.0.0.1:${ports[i]}`).join(',');
    for (const id of ids) {
      const dir = path.join(root, id);
      const peers = opts.peersArg ? opts.peersArg(id) : direct;
      const args = ['--id', id, '--peers', peers, '--dir', dir, '--cluster-id', 'test-cluster'];
      if (opts.groupCommit === false) args.push('--group-commit', '0');
      if (opts.snapshotEvery !== undefined) args.push('--snapshot-every', String(opts.snapshotEvery));
      if (opts.electionMin !== undefined) args.push('--election-min', String(opts.electionMin));
      if (opts.electionMax !== undefined) args.push('--election-max', String(opts.electionMax));
      if (opts.heartbeat !== undefined) args.push('--heartbeat', String(opts.heartbeat));
      c.members.push(new MemberProcess(id, dir, args));
    }
    return c;
  }

  member(id: string): MemberProcess {
    return this.members.find((m) => m.id === id)!;
  }

  async startAll(): Promise<void> {
    await Promise.all(this.members.filter((m) => !m.running).map((m) => m.start()));
  }

  /** Poll the running members until one is a quorate leader that committed in its term. */
  async waitLeader(timeoutMs = 20_000, exclude?: string): Promise<MemberProcess> {
    const deadline = Date.now() + timeoutMs;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      const running = this.members.filter((m) => m.running && m.id !== exclude);
      const st = await Promise.all(running.map((m) => m.status()));
      seen = st.map((s, k) => `${running[k]!.id} ${JSON.stringify({ ...s, id: undefined })}`);
      const i = st.findIndex((s) => s.ok && s.role === 'leader' && s.quorate);
      if (i >= 0) return running[i]!;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(
      `no leader within ${timeoutMs} ms; last statuses ${seen.join(', ')}; ${this.members.map((m) => m.describe()).join('; ')}`,
    );
  }

  /**
   * Propose through the current leader (never `exclude`), retrying on "not leader" until the
   * deadline: on a loaded host a starved leader can lose its place between two proposals.
   */
  async propose(data: string, timeoutMs = 20_000, exclude?: string): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.waitLeader(Math.max(1, deadline - Date.now()), exclude);
      const r = await leader.request({ op: 'propose', data });
      if (r.ok || r.error !== 'amqp:not-allowed' || Date.now() > deadline) return r;
    }
  }

  /**
   * Wait until every running member applied at least `count` values and takes part in votes: a
   * member that started blank votes only once a leader has told it it caught up, a round trip
   * after its entries, and a test that stops a member next needs every other one voting.
   */
  async waitApplied(count: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const st = await Promise.all(this.members.filter((m) => m.running).map((m) => m.status()));
      if (st.every((s) => s.ok && s.count >= count && s.recovering === null)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(
      `members did not apply ${count} values and vote within ${timeoutMs} ms; ${this.members.map((m) => m.describe()).join('; ')}`,
    );
  }

  async destroy(): Promise<void> {
    await Promise.all(this.members.map((m) => m.kill9()));
    rmSync(this.root, { recursive: true, force: true });
  }
}
