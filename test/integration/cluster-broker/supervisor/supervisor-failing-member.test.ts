import { describe, expect, it } from 'vitest';
import { Supervisor } from '../../../../src/cluster-broker/supervisor/supervisor.js';
import { waitFor } from '../../../support/net.js';
import { cleanups, useCleanups } from './stand-in-cluster.js';

useCleanups();

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
