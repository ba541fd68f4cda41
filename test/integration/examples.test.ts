/**
 * Runs every user example in examples/ as users would (`tsx examples/X.ts ARGS`, importing the
 * package by name) against a real broker or cluster, and checks what it prints and its exit code.
 * The examples' own vitest test (examples/cluster-failover.test.ts) runs as a test file itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import {
  type BrokerHandle,
  type ClusterHandle,
  hashPassword,
  parseHash,
  startBroker,
  startCluster,
} from '../../src/broker.js';
import { selfSignedCert } from '../support/tls.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsxLoader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');

/** One example run: its output lines as they come, and its exit. */
class ExampleRun {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private watchers: (() => void)[] = [];

  constructor(file: string, args: string[], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, ['--import', tsxLoader, join(root, 'examples', file), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    const onData = (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      this.lines.push(...parts);
      for (const w of this.watchers) w();
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Resolves with the first line matching `pattern` (rejects if the example exits first). */
  waitForLine(pattern: RegExp): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const line = this.lines.find((l) => pattern.test(l));
        if (line !== undefined) {
          this.watchers = this.watchers.filter((w) => w !== check);
          resolve(line);
        }
      };
      this.watchers.push(check);
      check();
      void this.exited.then(() => {
        check();
        reject(new Error(`exited before printing ${pattern}:\n${this.lines.join('\n')}`));
      });
    });
  }

  /** Exit code, with the output in the failure message when it is not 0. */
  async succeeded(): Promise<string> {
    const code = await this.exited;
    const output = this.lines.join('\n');
    expect(code, output).toBe(0);
    return output;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

const runs: ExampleRun[] = [];
function run(file: string, args: string[], env?: Record<string, string>): ExampleRun {
  const r = new ExampleRun(file, args, env);
  runs.push(r);
  return r;
}
afterAll(() => {
  for (const r of runs) r.kill();
});

describe('examples against one broker', () => {
  let broker: BrokerHandle;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker?.stop());

  it('send-receive.ts: three sends accepted, the same three received', async () => {
    const output = await run('send-receive.ts', [broker.url]).succeeded();
    expect(output.match(/^sent order \d: accepted/gm)).toHaveLength(3);
    expect(output).toContain('received {"order":1,"total":10}');
    expect(output).toContain('received {"order":3,"total":30}');
    expect(broker.stats().queues.find((q) => q.name === 'example-orders')?.depth).toBe(0);
  });

  it('transactions.ts: one order moved at the commit, the other back in its queue after the rollback', async () => {
    const output = await run('transactions.ts', [broker.url]).succeeded();
    expect(output).toContain('committed order 1');
    expect(output).toContain('rolled back order 2: payment service unavailable');
    expect(output).toContain('offered again: order 2');
    const depth = (name: string) => broker.stats().queues.find((q) => q.name === name)?.depth;
    expect(depth('example-tx-processed')).toBe(1);
    expect(depth('example-tx-incoming')).toBe(1);
  });

  it('request-reply.ts: every request answered through the named reply queue', async () => {
    const output = await run('request-reply.ts', [broker.url]).succeeded();
    expect(output).toContain('request 1 -> reply {"doubled":2}');
    expect(output).toContain('request 3 -> reply {"doubled":6}');
  });
});

describe('tls-users.ts against a TLS broker with a users table', () => {
  let dir: string;
  let broker: BrokerHandle;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quorate-example-tls-'));
    const { key, cert } = selfSignedCert(dir);
    broker = await startBroker({
      tls: { key: readFileSync(key), cert: readFileSync(cert) },
      users: new Map([['alice', parseHash(await hashPassword('s3cret'))]]),
      anonymous: false,
    });
  });
  afterAll(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects with the CA and the right password', async () => {
    const url = `amqps://localhost:${broker.port}`;
    const env = { QUORATE_USER: 'alice', QUORATE_PASSWORD: 's3cret' };
    const output = await run('tls-users.ts', [url, join(dir, 'cert.pem')], env).succeeded();
    expect(output).toContain(`connected to amqps://localhost:${broker.port} as alice: accepted`);
  });

  it('fails with a wrong password', async () => {
    const url = `amqps://localhost:${broker.port}`;
    const env = { QUORATE_USER: 'alice', QUORATE_PASSWORD: 'wrong' };
    expect(await run('tls-users.ts', [url, join(dir, 'cert.pem')], env).exited).not.toBe(0);
  });
});

describe('failover.ts against a 3-member cluster', () => {
  let cluster: ClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3 });
  });
  afterAll(() => cluster?.stop());

  it('keeps sending through a kill -9 of the member in use; every accepted message arrives once', async () => {
    const example = run('failover.ts', [cluster.urls.join(','), '150']);
    onTestFailed(() => console.log(`failover.ts printed:\n${example.lines.join('\n')}`));
    const connected = await example.waitForLine(/^connected to /);
    await example.waitForLine(/^sent 50$/);
    const port = new URL(connected.replace('connected to ', '')).port;
    const inUse = cluster.members().find((m) => new URL(m.url).port === port);
    await cluster.kill(inUse!.id);
    const output = await example.succeeded();
    expect(output).toMatch(/^failover .* -> /m);
    expect(output).toContain('accepted 150, received 150, duplicates 0');
  }, 300_000); // a cluster on a loaded 2-core machine: tsx start-up, 150 paced sends, a failover
});
