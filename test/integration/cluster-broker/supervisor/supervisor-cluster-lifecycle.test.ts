import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memberV8Flags } from '../../../../src/cluster-broker/supervisor/member-v8-flags.js';
import { processAlive } from '../../../../src/cluster-broker/supervisor/process-state.js';
import { startCluster } from '../../../../src/cluster-broker/supervisor/start-cluster.js';
import type { MemberExit } from '../../../../src/cluster-broker/supervisor/types.js';
import { readStatus, standInCommand } from '../../../cluster-broker/supervisor/support.js';
import { cluster, expectReachability, pidsGone, useCleanups } from './stand-in-cluster.js';

useCleanups();

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
      // two members on this host: the flags the rule gives for two (the collector's threads follow the cores)
      expect(execArgv).toEqual([...memberV8Flags(2), '--initial-old-space-size=64']);
    }
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
