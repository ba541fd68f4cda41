/** The supervisor's "fails K times in T" rule, with plain `node -e` members (no broker needed). */
import { describe, expect, it } from 'vitest';
import { RestartLimit } from '../../../src/cluster-broker/supervisor/restart-limit.js';
import { Supervisor } from '../../../src/cluster-broker/supervisor/supervisor.js';
import type { MemberFailed } from '../../../src/cluster-broker/supervisor/types.js';

describe('RestartLimit', () => {
  it('trips at the K-th failure within the window, forgets older ones', () => {
    const limit = new RestartLimit({ maxFailures: 3, failureWindowMs: 1_000 });
    expect(limit.fail(0)).toBe(false);
    expect(limit.fail(500)).toBe(false);
    expect(limit.fail(1_200)).toBe(false); // the one at 0 is out of the window
    expect(limit.fail(1_400)).toBe(true);
  });
});

function crashing(code: number): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['-e', `process.stderr.write('boom ${code}\\n'); process.exit(${code})`],
  };
}

describe('Supervisor restart limit', () => {
  it('gives up after maxFailures, says why, and start() rejects with that reason', async () => {
    const supervisor = new Supervisor({
      members: [{ id: 'x', command: () => crashing(3) }],
      restartPolicy: { initialDelayMs: 10, maxDelayMs: 20, maxFailures: 3, failureWindowMs: 600_000 },
    });
    const failed: MemberFailed[] = [];
    const restarts: number[] = [];
    supervisor.on('member-failed', (f) => failed.push(f));
    supervisor.on('member-restart', (r) => restarts.push(r.delayMs));
    try {
      await expect(supervisor.start(60_000)).rejects.toThrow(
        /member x failed 3 times within 600 s.*last words: boom 3/,
      );
      expect(restarts).toHaveLength(2);
      expect(failed).toEqual([
        { id: 'x', reason: expect.stringContaining('code 3'), failures: 3, lastOutput: 'boom 3' },
      ]);
      expect(supervisor.member('x').state).toBe('dead');
    } finally {
      await supervisor.stop();
    }
  });

  it('a member that refuses its configuration (exit 2) is not restarted at all', async () => {
    const supervisor = new Supervisor({ members: [{ id: 'x', command: () => crashing(2) }] });
    const restarts: unknown[] = [];
    supervisor.on('member-restart', (r) => restarts.push(r));
    try {
      await expect(supervisor.start(60_000)).rejects.toThrow(/refused its configuration \(exit code 2\)/);
      expect(restarts).toEqual([]);
    } finally {
      await supervisor.stop();
    }
  });

  it('SIGKILLs from outside (a fault injector, an operator) do not count as failures', async () => {
    const supervisor = new Supervisor({
      members: [
        {
          id: 'x',
          command: () => ({
            command: process.execPath,
            args: [
              '-e',
              `console.log(JSON.stringify({ready:true,id:'x',amqpPort:1,clusterPort:2,pid:process.pid})); setInterval(() => {}, 1000)`,
            ],
          }),
        },
      ],
      restartPolicy: { initialDelayMs: 10, maxDelayMs: 20, maxFailures: 2, failureWindowMs: 600_000 },
    });
    const failed: unknown[] = [];
    supervisor.on('member-failed', (f) => failed.push(f));
    try {
      await supervisor.start(60_000);
      for (let i = 0; i < 3; i++) {
        const pid = supervisor.member('x').pid!;
        const readyAgain = new Promise<void>((resolve) => supervisor.once('member-ready', () => resolve()));
        process.kill(pid, 'SIGKILL');
        await readyAgain;
      }
      expect(failed).toEqual([]);
      expect(supervisor.member('x')).toMatchObject({ state: 'running', restarts: 3 });
    } finally {
      await supervisor.stop();
    }
  });
});

describe('Supervisor member URLs', () => {
  it('keeps a member’s HTTP and WebSocket URLs known while it restarts', async () => {
    const ready = {
      ready: true,
      id: 'x',
      amqpPort: 1,
      clusterPort: 2,
      httpPort: 15672,
      wsPort: 15673,
      wsTls: true,
    };
    const supervisor = new Supervisor({
      members: [
        {
          id: 'x',
          httpPort: 15672,
          wsPort: 15673,
          command: () => ({
            command: process.execPath,
            args: [
              '-e',
              `console.log(JSON.stringify({...${JSON.stringify(ready)}, pid: process.pid})); setInterval(() => {}, 1000)`,
            ],
          }),
        },
      ],
      // the restart waits long enough for the member to be looked at in between
      restartPolicy: { initialDelayMs: 60_000, maxDelayMs: 60_000, maxFailures: 5, failureWindowMs: 600_000 },
    });
    try {
      await supervisor.start(60_000);
      expect(supervisor.member('x').wsUrl).toBe('wss://127.0.0.1:15673');
      const restarting = new Promise<void>((resolve) => supervisor.once('member-restart', () => resolve()));
      process.kill(supervisor.member('x').pid!, 'SIGKILL');
      await restarting;
      expect(supervisor.member('x')).toMatchObject({
        pid: null,
        httpUrl: 'http://127.0.0.1:15672',
        wsUrl: 'wss://127.0.0.1:15673',
      });
    } finally {
      await supervisor.stop();
    }
  });
});
