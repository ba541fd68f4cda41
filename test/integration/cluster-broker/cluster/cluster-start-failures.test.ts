/**
 * `quorate-broker cluster` as a real process (real members) when it cannot come up: a base port
 * already taken fails at once with the port named; a member that keeps failing is given up on
 * after --max-failures, with the reason, and the command exits non-zero.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allocateFreePorts } from '../../../../src/cluster-broker/supervisor/ports.js';
import { type BrokerOutput, launchBroker, outputAtExit } from '../../../support/broker-process.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

function cluster(args: string[]): Promise<BrokerOutput> {
  const run = launchBroker(['cluster', ...args], { keepStderrLines: Number.POSITIVE_INFINITY });
  cleanups.push(async () => run.child.exitCode === null && run.child.kill('SIGKILL'));
  return outputAtExit(run);
}

function events(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('quorate-broker cluster that cannot come up', () => {
  it('a base port already taken: exits 1 at once, naming the port, without starting any member', async () => {
    const [port] = await allocateFreePorts(1);
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(resolve)));
    const run = await cluster(['--nodes', '3', '--base-port', String(port)]);
    expect(run.code, run.stderr).toBe(1);
    // the held port must be named; another port of the range (AMQP or cluster) may be taken by
    // some other process on a busy machine, and is then listed beside it
    const taken = /ports? ([\d, ]+) on 127\.0\.0\.1 already in use/.exec(run.stderr);
    expect(taken, run.stderr).not.toBeNull();
    expect(taken![1]!.split(', ').map(Number)).toContain(port);
    expect(run.stderr).toContain('pick another --base-port');
    expect(
      events(run.stdout).filter((e) => e.event === 'member-ready' || e.event === 'member-restart'),
    ).toEqual([]);
  });

  it('a member that keeps failing is not restarted past --max-failures; the command exits 1 and says why', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'qb-crashloop-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    // n2's store cannot be created: a file where its raft directory must go
    await mkdir(join(dataDir, 'n2'), { recursive: true });
    await writeFile(join(dataDir, 'n2', 'raft'), 'not a directory');
    const run = await cluster([
      '--nodes',
      '3',
      '--base-port',
      '0',
      '--data-dir',
      dataDir,
      '--max-failures',
      '3',
      '--failure-window',
      '600',
    ]);
    expect(run.code, run.stderr).toBe(1);
    const all = events(run.stdout);
    const failed = all.filter((e) => e.event === 'member-failed');
    expect(failed, run.stdout).toHaveLength(1);
    expect(failed[0]).toMatchObject({ id: 'n2', failures: 3 });
    expect(String(failed[0]!.reason)).toContain('member n2 failed 3 times within 600 s: not restarting it');
    expect(String(failed[0]!.reason)).toContain('cannot start the member');
    expect(all.filter((e) => e.event === 'member-restart' && e.id === 'n2')).toHaveLength(2);
    expect(run.stderr).toContain('member n2 is down for good');
    expect(run.stderr).toMatch(
      /cluster did not start: .*member n2 is dead \(not restarting\): member n2 failed 3 times/,
    );
  });
});
