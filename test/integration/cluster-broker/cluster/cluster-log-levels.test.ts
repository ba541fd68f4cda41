/**
 * Log levels chosen by what an operator must act on (docs/production.md#logging), seen on a real
 * `quorate-broker cluster`: a clean start prints no WARN at the default level; a member that
 * loses the majority after it served says so at WARN.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { launchBroker } from '../../../support/broker-process.js';
import { waitFor } from '../../../support/net.js';

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
  const run = launchBroker(
    ['cluster', '--nodes', '3', '--base-port', '0', '--data-dir', dir, '--log-level', 'info'],
    { keepStderrLines: Number.POSITIVE_INFINITY },
  );
  const { child } = run;
  const stdout = (): string => run.stdout.join('\n');
  const stderr = (): string => run.stderr.join('\n');
  const stopped: number[] = [];
  cleanups.push(async () => {
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
  await waitFor(() => stdout().includes('"cluster-ready"'), { timeoutMs: 120_000, what: 'cluster-ready' });
  // every member serving (info lines), so the one left alone below has served
  await waitFor(() => (stderr().match(/ INFO cluster: serving/g) ?? []).length >= 3, {
    timeoutMs: 120_000,
    what: 'all three members serving',
  });
  expect(
    stderr()
      .split('\n')
      .filter((l) => / WARN /.test(l)),
  ).toEqual([]);

  // two members stopped: the third keeps running without a majority
  const members = stdout()
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
  await waitFor(() => warning.test(stderr()), {
    timeoutMs: 60_000,
    what: 'a WARN from the member left alone',
  }).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; stderr:\n${stderr().slice(-4000)}`);
  });
}, 240_000);
