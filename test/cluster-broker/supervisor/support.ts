/**
 * Helpers shared by the supervisor tests: the stand-in member's command and its status probe.
 */
import { createConnection } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  type ClusterMemberLaunch,
  memberNodeArgs,
} from '../../../src/cluster-broker/supervisor/default-member-command.js';
import type { MemberCommand } from '../../../src/cluster-broker/supervisor/types.js';

export const STAND_IN_MEMBER = fileURLToPath(new URL('./fixtures/stand-in-member.mjs', import.meta.url));

/** Starts the stand-in member (plain JS, so no loader start-up cost) with the real member's flags. */
export function standInCommand(env: NodeJS.ProcessEnv = {}): (member: ClusterMemberLaunch) => MemberCommand {
  return (member) => ({
    command: process.execPath,
    args: [STAND_IN_MEMBER, ...memberNodeArgs(member)],
    env: { ...process.env, ...env },
  });
}

export interface StandInStatus {
  id: string;
  pid: number;
  /** The stand-in's `process.execArgv`: the Node flags the supervisor started it with. */
  execArgv: string[];
  reach: Record<string, boolean>;
}

/** Asks a stand-in for its status on its AMQP port; rejects if no answer within `timeoutMs`. */
export function readStatus(port: number, timeoutMs = 5_000): Promise<StandInStatus> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no status from port ${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(text) as StandInStatus);
      } catch (err) {
        reject(err);
      }
    });
  });
}

/**
 * Whether, in the status of every observer, reach[to] equals `expected(from, to)` for every
 * other member `to` of `allIds` (observers are the members asked: live ones).
 */
export async function reachabilityMatches(
  observers: readonly { id: string; amqpPort: number }[],
  allIds: readonly string[],
  expected: (from: string, to: string) => boolean,
): Promise<boolean> {
  const statuses = await Promise.all(observers.map((m) => readStatus(m.amqpPort).catch(() => undefined)));
  return statuses.every((status, i) => {
    if (status === undefined) return false;
    const from = observers[i]!.id;
    return allIds.every((to) => to === from || status.reach[to] === expected(from, to));
  });
}
