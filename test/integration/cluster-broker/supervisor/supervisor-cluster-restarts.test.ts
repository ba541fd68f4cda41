import { describe, expect, it } from 'vitest';
import { isProcessStopped, processAlive } from '../../../../src/cluster-broker/supervisor/process-state.js';
import type { MemberExit, MemberRestart } from '../../../../src/cluster-broker/supervisor/types.js';
import { readStatus } from '../../../cluster-broker/supervisor/support.js';
import { waitFor } from '../../../support/net.js';
import { cluster, expectReachability, useCleanups } from './stand-in-cluster.js';

useCleanups();

describe('startCluster with stand-in members', () => {
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
});
