/**
 * Setup the supervisor-*.test.ts files share: cleanups run after each test, a stand-in cluster
 * stopped by them, and waits on what the members see of each other and on member processes.
 */
import { existsSync } from 'node:fs';
import { afterEach, expect } from 'vitest';
import type { ClusterHandle } from '../../../../src/cluster-broker/api.js';
import { processAlive } from '../../../../src/cluster-broker/supervisor/process-state.js';
import { startCluster } from '../../../../src/cluster-broker/supervisor/start-cluster.js';
import {
  reachabilityMatches,
  STAND_IN_MEMBER,
  standInCommand,
} from '../../../cluster-broker/supervisor/support.js';
import { waitFor } from '../../../support/net.js';

/** Work to undo after the current test, run newest first by the afterEach useCleanups() registers. */
export const cleanups: (() => Promise<void> | void)[] = [];

/** Registers the afterEach that runs `cleanups`; call once at the top of a test file. */
export function useCleanups(): void {
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
}

export async function cluster(options: Parameters<typeof startCluster>[0] = {}): Promise<ClusterHandle> {
  const handle = await startCluster({ memberCommand: standInCommand(), ...options });
  cleanups.push(() => handle.stop());
  return handle;
}

export async function expectReachability(
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

export const pidsGone = (pids: readonly number[], what: string): Promise<void> =>
  waitFor(() => pids.every((pid) => !processAlive(pid)), { timeoutMs: 20_000, what });

// Referenced so a moved fixture fails loudly in every file using this rather than as a spawn error.
expect(existsSync(STAND_IN_MEMBER)).toBe(true);
