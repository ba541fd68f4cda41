/**
 * The supervisor and startCluster with stand-in members (test/cluster-broker/supervisor/fixtures): ready lines,
 * kill -9 with and without auto-restart, backoff, pause/resume, partition shapes seen by the
 * members themselves, clean stop, and members outliving neither stop() nor a SIGKILLed supervisor.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/cluster-broker/api.js';
import { MEMBER_V8_FLAGS } from '../../../../src/cluster-broker/supervisor/member-v8-flags.js';
import { isProcessStopped, processAlive } from '../../../../src/cluster-broker/supervisor/process-state.js';
import { startCluster } from '../../../../src/cluster-broker/supervisor/start-cluster.js';
import { Supervisor } from '../../../../src/cluster-broker/supervisor/supervisor.js';
import type { MemberExit, MemberRestart } from '../../../../src/cluster-broker/supervisor/types.js';
import {
  reachabilityMatches,
  readStatus,
  STAND_IN_MEMBER,
  standInCommand,
} from '../../../cluster-broker/supervisor/support.js';
import { waitFor } from '../../../support/net.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster(options: Parameters<typeof startCluster>[0] = {}): Promise<ClusterHandle> {
  const handle = await startCluster({ memberCommand: standInCommand(), ...options });
  cleanups.push(() => handle.stop());
  return handle;
}

async function expectReachability(
  handle: ClusterHandle,
  expected: (from: string, to: string) => boolean,
  what: string,
  observers = handle.ids,
): Promise<void> {
  const asked = (): { id: string; amqpPort: number }[] =>
    handle.members().filter((m) => observers.includes(m.id));
  await waitFor(() => reachabilityMatches(asked(), handle.ids, expected), {
    timeoutMs: 20_000,
    what,
    intervalMs: 100,
  });
}

const pidsGone = (pids: readonly number[], what: string): Promise<void> =>
  waitFor(() => pids.every((pid) => !processAlive(pid)), { timeoutMs: 20_000, what });

describe('startCluster with stand-in members', () => {
  it('starts every member, reports them, and they all reach each other through the mesh', async () => {
    const handle = await cluster({ nodes: 3 });
    const members = handle.members();
    expect(members.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
    for (const m of members) {
      expect(m.state).toBe('running');
      expect(m.restarts).toBe(0);
      expect(processAlive(m.pid!)).toBe(true);
      expect(m.url).toBe(`amqp://127.0.0.1:${m.amqpPort}`);
      const status = await readStatus(m.amqpPort);
      expect(status).toMatchObject({ id: m.id, pid: m.pid });
      // Each member got its own store dir.
      expect(readFileSync(join(handle.dataDir, m.id, 'starts.log'), 'utf8').trim()).toBe(String(m.pid));
    }
    expect(handle.urls).toEqual(members.map((m) => m.url));
    await expectReachability(handle, () => true, 'full mesh');
    // Peers really talk through the proxies, not directly.
    expect(handle.mesh.stats().every((link) => link.bytesToTarget > 0)).toBe(true);
  });

  it("starts every member with the members' V8 flags, before the command's own (which win)", async () => {
    const base = standInCommand();
    const handle = await cluster({
      nodes: 2,
      // an operator's flag for the member's Node, as `quorate-broker cluster` forwards its execArgv
      memberCommand: (member) => {
        const c = base(member);
        return { ...c, args: ['--initial-old-space-size=64', ...c.args] };
      },
    });
    for (const m of handle.members()) {
      // read in the spawned process itself, not from the command the supervisor was given
      const { execArgv } = await readStatus(m.amqpPort);
      expect(execArgv).toEqual([...MEMBER_V8_FLAGS, '--initial-old-space-size=64']);
    }
  });

  it('partitions: one member alone, then heal', async () => {
    const handle = await cluster({ nodes: 3 });
    await expectReachability(handle, () => true, 'full mesh');
    handle.partition([['n1'], ['n2', 'n3']]);
    await expectReachability(
      handle,
      (from, to) => from !== 'n1' && to !== 'n1',
      'n1 cut off, n2 <-> n3 still talking',
    );
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });

  it('partitions 5 members: minority/majority, then a ring', async () => {
    const handle = await cluster({ nodes: 5 });
    await expectReachability(handle, () => true, 'full mesh');
    const minority = new Set(['n1', 'n2']);
    handle.partition([
      ['n1', 'n2'],
      ['n3', 'n4', 'n5'],
    ]);
    await expectReachability(
      handle,
      (from, to) => minority.has(from) === minority.has(to),
      'minority/majority',
    );
    handle.ring();
    const neighbours = (from: string, to: string): boolean => {
      const d = Math.abs(Number(from.slice(1)) - Number(to.slice(1)));
      return d === 1 || d === 4;
    };
    await expectReachability(handle, neighbours, 'ring');
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });

  it('lossy links reset member connections (seeded); the members recover once it stops', async () => {
    const handle = await cluster({ nodes: 3, seed: 7 });
    await expectReachability(handle, () => true, 'full mesh');
    handle.lossy(0.2);
    const resets = (): number => handle.mesh.stats().reduce((sum, link) => sum + link.connectionsReset, 0);
    await waitFor(() => resets() >= 10, { timeoutMs: 20_000, what: 'connections reset by lossy links' });
    handle.lossy(0);
    const after = resets();
    await expectReachability(handle, () => true, 'full mesh after lossy');
    expect(resets()).toBe(after);
  });

  it('slow links delay member traffic without breaking it', async () => {
    const handle = await cluster({ nodes: 3 });
    handle.slow(100);
    await waitFor(() => handle.mesh.stats().some((link) => link.bytesHeld > 0), {
      timeoutMs: 20_000,
      what: 'bytes held back by slow links',
      intervalMs: 5,
    });
    await expectReachability(handle, () => true, 'full mesh over slow links');
    handle.slow(0);
  });

  it("cutMode 'blackhole' partitions silently and heals", async () => {
    const handle = await cluster({ nodes: 3, cutMode: 'blackhole' });
    await expectReachability(handle, () => true, 'full mesh');
    handle.partition([['n3'], ['n1', 'n2']]);
    await expectReachability(handle, (from, to) => from !== 'n3' && to !== 'n3', 'n3 black-holed');
    // Nothing was reset: the stalled connections are still there, just silent.
    const cutLinks = handle.mesh.stats().filter((link) => link.cut);
    expect(cutLinks).toHaveLength(4);
    expect(cutLinks.every((link) => link.activeConnections >= 1 && link.connectionsReset === 0)).toBe(true);
    handle.heal();
    await expectReachability(handle, () => true, 'healed mesh');
  });

  it('restart(id) of a running member replaces it; kill(id) works on a paused member', async () => {
    const handle = await cluster({ nodes: 3 });
    const before = handle.members()[0]!;
    const exits: MemberExit[] = [];
    handle.supervisor.on('member-exit', (e) => exits.push(e));
    const after = await handle.restart('n1');
    expect(after).toMatchObject({ id: 'n1', state: 'running', restarts: 1, amqpPort: before.amqpPort });
    expect(after.pid).not.toBe(before.pid);
    expect(processAlive(before.pid!)).toBe(false);
    expect(exits).toEqual([
      { id: 'n1', pid: before.pid, code: null, signal: 'SIGTERM', expected: true, willRestart: false },
    ]);
    expect(await readStatus(after.amqpPort)).toMatchObject({ id: 'n1', pid: after.pid });

    const n2 = handle.members()[1]!;
    await handle.pause('n2');
    await handle.kill('n2');
    expect(processAlive(n2.pid!)).toBe(false);
    expect(handle.members()[1]!.state).toBe('dead');
    await handle.restart('n2');
    await expectReachability(handle, () => true, 'everyone back');
  });

  it('kill(id) is a real SIGKILL and the member stays down until restart(id)', async () => {
    const handle = await cluster({ nodes: 3 });
    const victim = handle.members().find((m) => m.id === 'n2')!;
    const exits: MemberExit[] = [];
    handle.supervisor.on('member-exit', (e) => exits.push(e));
    await handle.kill('n2');
    expect(processAlive(victim.pid!)).toBe(false);
    expect(exits).toEqual([
      { id: 'n2', pid: victim.pid, code: null, signal: 'SIGKILL', expected: true, willRestart: false },
    ]);
    expect(handle.members()[1]).toMatchObject({ id: 'n2', state: 'dead', pid: null });
    await expect(handle.waitReady('n2', 1_000)).rejects.toThrow(/dead/);
    await expectReachability(handle, (_from, to) => to !== 'n2', 'n2 gone for its peers', ['n1', 'n3']);

    const back = await handle.restart('n2');
    expect(back).toMatchObject({ id: 'n2', state: 'running', restarts: 1, amqpPort: victim.amqpPort });
    expect(back.pid).not.toBe(victim.pid);
    await expectReachability(handle, () => true, 'n2 back');
  });

  it('restarts a member SIGKILLed from outside, with growing backoff (exit, then restart, then ready)', async () => {
    const handle = await cluster({
      nodes: 3,
      restartPolicy: { initialDelayMs: 200, factor: 2, maxDelayMs: 10_000, resetAfterMs: 60_000 },
    });
    const restarts: (MemberRestart & { at: number })[] = [];
    const readyAt: number[] = [];
    const sequence: string[] = [];
    handle.supervisor.on('member-exit', (e) => sequence.push(`exit ${e.id} willRestart=${e.willRestart}`));
    handle.supervisor.on('member-restart', (r) => {
      restarts.push({ ...r, at: Date.now() });
      sequence.push(`restart ${r.id}`);
    });
    handle.supervisor.on('member-ready', (m) => {
      if (m.id === 'n1') readyAt.push(Date.now());
      sequence.push(`ready ${m.id}`);
    });
    for (let round = 1; round <= 3; round++) {
      const pid = handle.members()[0]!.pid!;
      process.kill(pid, 'SIGKILL');
      await waitFor(() => readyAt.length === round, { timeoutMs: 20_000, what: `n1 restarted (${round})` });
      expect(handle.members()[0]!.pid).not.toBe(pid);
      expect(processAlive(pid)).toBe(false);
    }
    expect(restarts.map((r) => [r.id, r.reason, r.delayMs])).toEqual([
      ['n1', 'crash', 200],
      ['n1', 'crash', 400],
      ['n1', 'crash', 800],
    ]);
    for (const [i, r] of restarts.entries()) expect(readyAt[i]! - r.at).toBeGreaterThanOrEqual(r.delayMs - 5);
    expect(handle.members()[0]).toMatchObject({ state: 'running', restarts: 3 });
    expect(sequence).toEqual(Array(3).fill(['exit n1 willRestart=true', 'restart n1', 'ready n1']).flat());
    await handle.waitReady();
  });

  it('kill(id, { restart: true }) lets the supervisor bring it back itself', async () => {
    const handle = await cluster({ nodes: 3, restartPolicy: { initialDelayMs: 50 } });
    const pid = handle.members()[2]!.pid!;
    await handle.kill('n3', { restart: true });
    await handle.waitReady('n3', 20_000);
    expect(handle.members()[2]).toMatchObject({ state: 'running', restarts: 1 });
    expect(handle.members()[2]!.pid).not.toBe(pid);
  });

  it('with autoRestart off, a crashed member stays dead', async () => {
    const handle = await cluster({ nodes: 3, autoRestart: false });
    const exits: MemberExit[] = [];
    handle.supervisor.on('member-exit', (e) => exits.push(e));
    process.kill(handle.members()[0]!.pid!, 'SIGKILL');
    await waitFor(() => exits.length === 1, { timeoutMs: 20_000, what: 'exit seen' });
    expect(exits[0]).toMatchObject({ id: 'n1', expected: false, willRestart: false });
    expect(handle.members()[0]!.state).toBe('dead');
  });

  it('pause(id) stops a member answering; resume(id) brings it back', async () => {
    const handle = await cluster({ nodes: 3 });
    await expectReachability(handle, () => true, 'full mesh');
    const n2 = handle.members()[1]!;
    await handle.pause('n2');
    expect(await isProcessStopped(n2.pid!)).toBe(true);
    expect(handle.members()[1]!.state).toBe('paused');
    // Its peers notice it went silent (their pings go unanswered)...
    const others = handle.members().filter((m) => m.id !== 'n2');
    await waitFor(
      async () => {
        const statuses = await Promise.all(others.map((m) => readStatus(m.amqpPort)));
        return statuses.every((s) => s.reach.n2 === false);
      },
      { timeoutMs: 20_000, what: 'peers see n2 silent' },
    );
    // ...and it answers nobody: the kernel accepts the connection, the process never replies.
    await expect(readStatus(n2.amqpPort, 1_000)).rejects.toThrow(/no status/);

    await handle.resume('n2');
    expect(handle.members()[1]!.state).toBe('running');
    expect(await readStatus(n2.amqpPort)).toMatchObject({ id: 'n2', pid: n2.pid });
    await expectReachability(handle, () => true, 'n2 answering again');
    expect(handle.members()[1]!.restarts).toBe(0);
  });

  it('stop() resumes paused members, stops every process and removes its temp data dir', async () => {
    const handle = await startCluster({ nodes: 3, memberCommand: standInCommand() });
    const pids = handle.members().map((m) => m.pid!);
    const exits: MemberExit[] = [];
    handle.supervisor.on('member-exit', (e) => exits.push(e));
    await handle.pause('n1');
    await handle.stop();
    expect(exits.map((e) => [e.id, e.signal]).sort()).toEqual([
      ['n1', 'SIGTERM'],
      ['n2', 'SIGTERM'],
      ['n3', 'SIGTERM'],
    ]);
    await pidsGone(pids, 'every member gone after stop()');
    expect(handle.members().every((m) => m.state === 'dead' && m.pid === null)).toBe(true);
    expect(existsSync(handle.dataDir)).toBe(false);
  });

  it('stop() SIGKILLs a member that ignores SIGTERM after the deadline', async () => {
    const handle = await startCluster({
      nodes: 1,
      memberCommand: standInCommand({ STANDIN_IGNORE_SIGTERM: '1' }),
      stopTimeoutMs: 500,
    });
    const pid = handle.members()[0]!.pid!;
    const exits: MemberExit[] = [];
    handle.supervisor.on('member-exit', (e) => exits.push(e));
    await handle.stop();
    expect(processAlive(pid)).toBe(false);
    expect(exits[0]).toMatchObject({ signal: 'SIGKILL', expected: true, willRestart: false });
  });

  it('start fails clearly when members die before they are ready (auto-restart off)', async () => {
    await expect(
      startCluster({
        nodes: 2,
        autoRestart: false,
        memberCommand: standInCommand({ STANDIN_EXIT_BEFORE_READY: '7' }),
      }),
    ).rejects.toThrow(/dead .*code 7/);
  });
});

describe('Supervisor', () => {
  it('reports a member command that cannot be spawned', async () => {
    const supervisor = new Supervisor({
      members: [{ id: 'x', command: () => ({ command: '/nonexistent/quorate-broker', args: [] }) }],
      autoRestart: false,
    });
    cleanups.push(() => supervisor.stop());
    await expect(supervisor.start(10_000)).rejects.toThrow(/cannot spawn it: .*ENOENT/);
    expect(supervisor.members()[0]).toMatchObject({ state: 'dead', pid: null });
  });

  it('restarts a member that keeps failing before ready, with capped backoff, until stopped', async () => {
    const supervisor = new Supervisor({
      members: [
        {
          id: 'x',
          command: () => ({ command: process.execPath, args: ['-e', 'process.exit(3)'] }),
        },
      ],
      restartPolicy: { initialDelayMs: 20, factor: 2, maxDelayMs: 40 },
    });
    cleanups.push(() => supervisor.stop());
    const delays: number[] = [];
    supervisor.on('member-restart', (r) => delays.push(r.delayMs));
    const started = supervisor.start(60_000).then(
      () => 'ready',
      (err: Error) => err.message,
    );
    // Each attempt costs a Node start-up; wait for a few rather than guessing a duration.
    await waitFor(() => delays.length >= 4, { timeoutMs: 30_000, what: 'four restarts' });
    expect(delays.slice(0, 4)).toEqual([20, 40, 40, 40]);
    expect(supervisor.members()[0]!.restarts).toBeGreaterThanOrEqual(3);
    await supervisor.stop();
    expect(await started).toMatch(/dead/);
    expect(supervisor.members()[0]!.state).toBe('dead');
  });
});

describe('quorate-broker cluster (runClusterCommand) as a process', () => {
  const RUN_CLUSTER = fileURLToPath(
    new URL('../../../cluster-broker/supervisor/fixtures/run-cluster.ts', import.meta.url),
  );

  interface CliRun {
    child: ChildProcess;
    lines: Record<string, unknown>[];
    exited: Promise<number | null>;
  }

  function runCli(args: string[]): CliRun {
    const child = spawn(process.execPath, ['--import', 'tsx', RUN_CLUSTER, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: fileURLToPath(new URL('../../../..', import.meta.url)),
    });
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a JSON line
      }
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid!, 'SIGKILL');
        await exited;
      }
      if (stderr.includes('Error')) console.error(stderr);
    });
    return { child, lines, exited };
  }

  const memberPids = (run: CliRun): number[] => {
    const summary = run.lines.find((l) => l.event === 'cluster-ready') as { members: { pid: number }[] };
    return summary.members.map((m) => m.pid);
  };

  async function readyCli(args: string[]): Promise<CliRun> {
    const run = runCli(args);
    await waitFor(() => run.lines.some((l) => l.event === 'cluster-ready'), {
      timeoutMs: 60_000,
      what: 'cluster-ready line',
    });
    return run;
  }

  it('prints each member, restarts one killed by PID, and stops all on SIGTERM (resuming paused ones)', async () => {
    const run = await readyCli(['--nodes', '3', '--base-port', '0']);
    const ready = run.lines.filter((l) => l.event === 'member-ready');
    expect(ready.map((l) => l.id).sort()).toEqual(['n1', 'n2', 'n3']);
    for (const line of ready) {
      expect(line).toMatchObject({
        pid: expect.any(Number),
        amqpPort: expect.any(Number),
        clusterPort: expect.any(Number),
      });
    }
    const pids = memberPids(run);
    expect(pids.every(processAlive)).toBe(true);

    // The demo's move: kill -9 the member in use; the supervisor brings it back.
    process.kill(pids[0]!, 'SIGKILL');
    await waitFor(
      () => run.lines.some((l) => l.event === 'member-ready' && l.id === 'n1' && l.restarts === 1),
      {
        timeoutMs: 30_000,
        what: 'n1 restarted',
      },
    );
    expect(run.lines.some((l) => l.event === 'member-restart' && l.id === 'n1')).toBe(true);
    const n1Again = run.lines.find((l) => l.event === 'member-ready' && l.id === 'n1' && l.restarts === 1)!;
    const allPids = [...pids, n1Again.pid as number];

    process.kill(pids[1]!, 'SIGSTOP');
    process.kill(run.child.pid!, 'SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.lines.at(-1)).toEqual({ event: 'cluster-stopped' });
    // The paused member was resumed and took the SIGTERM (not the SIGKILL after the deadline).
    expect(run.lines.find((l) => l.event === 'member-exit' && l.pid === pids[1])).toMatchObject({
      signal: 'SIGTERM',
    });
    await pidsGone(allPids.slice(1), 'members gone after SIGTERM');
  });

  it('members exit when their supervisor is SIGKILLed', async () => {
    // The supervisor cannot clean up after a SIGKILL: give it a data dir this test removes.
    const dataDir = await mkdtemp(join(tmpdir(), 'quorate-supervisor-test-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const run = await readyCli(['--nodes', '3', '--base-port', '0', '--data-dir', dataDir]);
    const pids = memberPids(run);
    expect(pids.every(processAlive)).toBe(true);
    process.kill(run.child.pid!, 'SIGKILL');
    await run.exited;
    await pidsGone(pids, 'members gone after their supervisor was SIGKILLed');
  });

  it('rejects bad flags with exit code 2', async () => {
    const run = runCli(['--nodes', 'three']);
    expect(await run.exited).toBe(2);
  });
});

// Referenced so a moved fixture fails loudly here rather than as a spawn error.
expect(existsSync(STAND_IN_MEMBER)).toBe(true);
