/**
 * Log levels chosen by what an operator must act on (docs/production.md#logging), seen on a real
 * `quorate-broker cluster`: a clean start prints no WARN at the default level; a member that
 * loses the majority after it served says so at WARN.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { waitFor } from '../../../support/net.js';

const ENTRY = 'src/cluster-broker/cli/main.ts';
const ROOT = new URL('../../../..', import.meta.url).pathname;
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface MemberReady {
  event: string;
  id: string;
  pid: number;
}

it('a clean cluster start prints no WARN; a member left without its majority warns', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-log-levels-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ENTRY,
      'cluster',
      '--nodes',
      '3',
      '--base-port',
      '0',
      '--data-dir',
      dir,
      '--log-level',
      'info',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const stopped: number[] = [];
  cleanups.push(async () => {
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
  await waitFor(() => stdout.includes('"cluster-ready"'), { timeoutMs: 120_000, what: 'cluster-ready' });
  // every member serving (info lines), so the one left alone below has served
  await waitFor(() => (stderr.match(/ INFO cluster: serving/g) ?? []).length >= 3, {
    timeoutMs: 120_000,
    what: 'all three members serving',
  });
  expect(stderr.split('\n').filter((l) => / WARN /.test(l))).toEqual([]);

  // two members stopped: the third keeps running without a majority
  const members = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as MemberReady)
    .filter((e) => e.event === 'member-ready');
  const [survivor, ...others] = members;
  for (const m of others) {
    process.kill(m.pid, 'SIGSTOP');
    stopped.push(m.pid);
  }
  const warning = new RegExp(`\\[${survivor!.id}\\] .* WARN cluster: not serving`);
  await waitFor(() => warning.test(stderr), {
    timeoutMs: 60_000,
    what: 'a WARN from the member left alone',
  }).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; stderr:\n${stderr.slice(-4000)}`);
  });
}, 240_000);
