/**
 * `quorate-broker queues list|create|purge|delete` run as a process (docs/management.md#cli)
 * against a single-node broker process with users and the manage grant, and against a follower of
 * a 3-member cluster: the change is seen through another member. Misuse exits 2 with one line
 * per mistake; a refusal says where the credentials came from.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterHandle, hashPassword } from '../../../../src/broker.js';
import { type Connection, connect } from '../../../../src/index.js';
import {
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { type BrokerProcess, spawnBroker } from '../../../support/broker-process.js';
import { waitFor } from '../../../support/net.js';

const ENTRY = 'src/cluster-broker/cli/main.ts';
const ROOT = new URL('../../../..', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface QueueJson {
  name: string;
  messageCount: number;
  arguments: Record<string, unknown>;
}

const children = new Set<ChildProcess>();

/** `quorate-broker queues ...argv` as a process; resolves when it exits. */
function queues(argv: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, 'queues', ...argv], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, QUORATE_USER: '', QUORATE_PASSWORD: '', ...env },
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * `queues(...)` against a cluster member, again while the member answers that it is not quorate:
 * on a loaded 2-core machine a member of the in-process cluster can see its own event loop stall
 * and stop serving for a moment (docs/cluster-member.md), a refusal the command reports (exit 1)
 * before it changes anything.
 */
async function queuesWhenServed(argv: string[], env: Record<string, string>): Promise<Run> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await queues(argv, env);
    if (run.code !== 1 || !/not quorate/.test(run.stderr) || Date.now() > deadline) return run;
  }
}

async function sendN(url: string, address: string, n: number): Promise<void> {
  const conn: Connection = await connect({
    urls: [url],
    reconnect: false,
    username: 'app',
    password: 'app-pw',
  });
  try {
    const s = await conn.openSender(address);
    for (let i = 0; i < n; i++) await s.send({ body: i }, { timeoutMs: 20_000 });
  } finally {
    await conn.close();
  }
}

let dir: string;
let usersFile: string;
const permissions = {
  users: { ops: { manage: true }, app: { send: ['*'], receive: ['*'] } },
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quorate-queues-cli-'));
  usersFile = join(dir, 'users.txt');
  writeFileSync(usersFile, `ops:${await hashPassword('ops-pw')}\napp:${await hashPassword('app-pw')}\n`, {
    mode: 0o600,
  });
  writeFileSync(join(dir, 'permissions.json'), JSON.stringify(permissions));
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('quorate-broker queues: misuse', () => {
  it('exits 2 with one line per mistake and the help pointer', { timeout: 120_000 }, async () => {
    const r = await queues(['frob', 'a', 'b', '--url', 'http://x', '--delivery-limit', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([
      "quorate-broker queues: unknown action 'frob' (known: list, create, purge, delete)",
      "quorate-broker queues: unexpected argument 'b'",
      "quorate-broker queues: --url 'http://x' is not an amqp:// or amqps:// URL",
      "quorate-broker queues: --delivery-limit must be an integer in 1..9007199254740991, got '0'",
      "see 'quorate-broker queues --help'",
    ]);
    const missing = await queues(['purge']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('purge needs a queue NAME');
    expect(missing.stderr).toContain('give --url');
    const flag = await queues(['list', '--url', 'amqp://127.0.0.1:1', '--max-length', '3', '--bogus']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('quorate-broker queues: unknown flag --bogus');
    const help = await queues(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: quorate-broker queues list|create|purge|delete');
  });
});

describe('quorate-broker queues against a single node', () => {
  let broker: BrokerProcess;
  let url: string;

  beforeAll(async () => {
    broker = await spawnBroker([
      '--port',
      '0',
      '--users',
      usersFile,
      '--permissions',
      join(dir, 'permissions.json'),
      '--no-auto-create',
    ]);
    url = `amqp://127.0.0.1:${broker.port}`;
  });

  afterAll(async () => {
    broker.child.kill('SIGTERM');
    await broker.exited;
  });

  it('creates, lists, purges and deletes as a user with the manage grant', { timeout: 240_000 }, async () => {
    const ops = ['--user', 'ops', '--password', 'ops-pw'];
    const created = await queues([
      'create',
      'orders',
      '--max-length',
      '5',
      '--delivery-limit',
      '3',
      '--url',
      url,
      ...ops,
    ]);
    expect(created).toMatchObject({ code: 0, stdout: "queue 'orders' declared\n", stderr: '' });
    // several members named: one that refuses first, then ours (comma list and repeated --url)
    const listed = await queues(['list', '--url', `amqp://127.0.0.1:1,${url}`, ...ops]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+MESSAGES\s+MAX-LENGTH\s+MAX-BYTES\s+DELIVERY-LIMIT\s+DEAD-LETTER$/);
    expect(lines.find((l) => l.startsWith('orders '))).toMatch(/^orders\s+0\s+5\s+\d+\s+3\s+orders\.dlq$/);

    await sendN(url, 'orders', 4);
    // credentials from the environment this time
    const env = { QUORATE_USER: 'ops', QUORATE_PASSWORD: 'ops-pw' };
    const json = await queues(['list', '--json', '--url', 'amqp://127.0.0.1:1', '--url', url], env);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as QueueJson[];
    expect(parsed.find((q) => q.name === 'orders')?.messageCount).toBe(4);

    const purged = await queues(['purge', 'orders', '--url', url], env);
    expect(purged).toMatchObject({ code: 0, stdout: "purged 4 messages from 'orders'\n" });
    await sendN(url, 'orders', 2);
    const deleted = await queues(['delete', 'orders', '--url', url], env);
    expect(deleted).toMatchObject({ code: 0, stdout: "deleted 'orders' (2 messages dropped)\n" });
    const again = await queues(['delete', 'orders', '--url', url], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe("quorate-broker queues: no queue 'orders' (404)\n");
  });

  it('refuses a user without the grant, a wrong password and an unreachable broker (exit 1)', {
    timeout: 120_000,
  }, async () => {
    const noGrant = await queues(['create', 'x', '--url', url], {
      QUORATE_USER: 'app',
      QUORATE_PASSWORD: 'app-pw',
    });
    expect(noGrant.code).toBe(1);
    expect(noGrant.stderr).toMatch(
      /no management grant \(403\) \[credentials from QUORATE_USER\/QUORATE_PASSWORD\]/,
    );
    const wrong = await queues(['list', '--url', url, '--user', 'ops', '--password', 'nope']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('[credentials from --user/--password]');
    const gone = await queues(['list', '--url', 'amqp://127.0.0.1:1', '--timeout', '5000']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^quorate-broker queues: .*ECONNREFUSED/);
  });
});

describe('quorate-broker queues against a cluster member', () => {
  let handle: ClusterHandle;

  beforeAll(async () => {
    handle = await startTestCluster({ usersFile, permissions });
    await waitServing(handle);
  });

  afterAll(async () => {
    await handle?.stop();
  });

  it('a change made through a follower is seen through another member', { timeout: 240_000 }, async () => {
    const leader = await waitLeader(handle);
    const [follower, other] = handle.ids
      .filter((id) => id !== leader)
      .map((id) => handle.urls[handle.ids.indexOf(id)]!);
    const env = { QUORATE_USER: 'ops', QUORATE_PASSWORD: 'ops-pw' };
    const created = await queuesWhenServed(
      ['create', 'jobs', '--max-length-bytes', '100000', '--url', follower!],
      env,
    );
    expect(created, created.stderr).toMatchObject({ code: 0, stdout: "queue 'jobs' declared\n" });
    await sendN(follower!, 'jobs', 3);
    // the other member applies the log on its own schedule: read until it has all three
    let jobs: { messageCount: number; arguments: Record<string, unknown> } | undefined;
    await waitFor(
      async () => {
        const listed = await queuesWhenServed(['list', '--json', '--url', other!], env);
        expect(listed.code, listed.stderr).toBe(0);
        jobs = (JSON.parse(listed.stdout) as QueueJson[]).find((q) => q.name === 'jobs');
        return jobs?.messageCount === 3;
      },
      { timeoutMs: 30_000, what: 'the other member to list jobs with 3 messages' },
    );
    expect(jobs).toMatchObject({ messageCount: 3, arguments: { 'x-max-length-bytes': 100000 } });
    const purged = await queuesWhenServed(['purge', 'jobs', '--url', other!], env);
    expect(purged.stdout, purged.stderr).toBe("purged 3 messages from 'jobs'\n");
    const deleted = await queuesWhenServed(['delete', 'jobs', '--url', follower!], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    const after = await queuesWhenServed(['list', '--json', '--url', handle.urls.join(',')], env);
    expect((JSON.parse(after.stdout) as QueueJson[]).map((q) => q.name)).not.toContain('jobs');
  });
});
