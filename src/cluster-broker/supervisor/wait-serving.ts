/**
 * Waiting until members serve: quorate, caught up with the cluster, accepting clients. A member's
 * ready line only says its process listens; a member that has not caught up yet (a new store
 * is blank until the leader brought it up to date) neither serves nor votes, so a cluster whose
 * leader is killed before the others caught up cannot elect a new one
 * (docs/cluster-member.md#serving). Asks each member's `/readyz` (200 once it serves).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SupervisorError } from './errors.js';
import type { MemberInfo } from './types.js';

const POLL_MS = 50;
/** One /readyz request gets this long (a paused member never answers). */
const PROBE_TIMEOUT_MS = 1_000;

async function serves(member: MemberInfo): Promise<boolean> {
  if (member.state !== 'running' || member.httpUrl === null) return false;
  try {
    const res = await fetch(new URL('/readyz', member.httpUrl), {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Resolves once every member in `ids` serves; rejects after `timeoutMs`. */
export async function waitServing(
  members: () => readonly MemberInfo[],
  ids: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const member = members().find((m) => m.id === id);
      if (!member) throw new SupervisorError('amqp:not-found', `no member ${id}`);
      if (member.httpUrl === null)
        throw new SupervisorError(
          'amqp:illegal-state',
          `member ${id} has no HTTP port to ask whether it serves`,
        );
      if (await serves(member)) break;
      if (performance.now() >= deadline)
        throw new SupervisorError(
          'amqp:resource-limit-exceeded',
          `member ${id} did not serve within ${timeoutMs} ms (state ${member.state}; GET ${member.httpUrl}/readyz)`,
        );
      await sleep(POLL_MS);
    }
  }
}
