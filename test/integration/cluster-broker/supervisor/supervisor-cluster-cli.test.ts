/** quorate-broker cluster (runClusterCommand) as a process: its output lines, restarts, SIGTERM, a SIGKILLed supervisor, bad flags. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../../../src/cluster-broker/supervisor/process-state.js';
import { waitFor } from '../../../support/net.js';
import { cleanups, pidsGone, useCleanups } from './stand-in-cluster.js';

useCleanups();

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
