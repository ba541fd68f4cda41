/**
 * Which processes a bench counts the CPU of, by the names its tables print: the client (this
 * process) and the broker's: one process for a single node, RabbitMQ (beam.smp) or the Proton
 * broker; for one of our clusters each member apart, named by its Raft role when the phase starts
 * ("leader n1", "follower n2"), read from the member's `GET /api/overview`; for a RabbitMQ quorum
 * queue each node by its role for that queue ("leader rabbit1", "follower rabbit2").
 */
import type { ClusterMemberProcess, DeclaredQueue, RunningBroker } from './brokers.js';
import type { CountedProcess } from './process-cpu.js';

/** The member's role as it reports it, or 'unknown' when it does not answer. */
async function roleOf(member: ClusterMemberProcess): Promise<string> {
  try {
    const res = await fetch(new URL('/api/overview', member.httpUrl), { signal: AbortSignal.timeout(2_000) });
    const doc = (await res.json()) as { role?: unknown };
    return typeof doc.role === 'string' ? doc.role : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Each member of a cluster, labelled `<prefix>leader n1`, `<prefix>follower n2`..., leader first. */
export async function memberProcesses(
  members: readonly ClusterMemberProcess[],
  prefix = '',
): Promise<CountedProcess[]> {
  return labelledByRole(members, await Promise.all(members.map(roleOf)), prefix);
}

function labelledByRole(
  members: readonly ClusterMemberProcess[],
  roles: readonly string[],
  prefix: string,
): CountedProcess[] {
  return leaderFirst(
    members.map((m, i) => ({
      label: `${prefix}${roles[i]} ${m.id}`,
      pid: m.pid,
      leader: roles[i] === 'leader',
    })),
  );
}

/** The leader first, then the rest by label. */
function leaderFirst(processes: Array<{ label: string; pid: number; leader: boolean }>): CountedProcess[] {
  return processes
    .sort((a, b) => Number(b.leader) - Number(a.leader) || a.label.localeCompare(b.label))
    .map(({ label, pid }) => ({ label, pid }));
}

/**
 * A RabbitMQ cluster's nodes for one quorum queue: `leader rabbit1`, then `follower rabbit2`...
 * (each node's `beam.smp`; the roles are the queue's, as rabbitmqctl reports its leader).
 */
export function quorumQueueProcesses(
  nodes: ReadonlyArray<{ name: string; pid: number }>,
  leader: string,
): CountedProcess[] {
  return leaderFirst(
    nodes.map((n) => ({
      label: `${n.name === leader ? 'leader' : 'follower'} ${n.name}`,
      pid: n.pid,
      leader: n.name === leader,
    })),
  );
}

/** Where a bench's clients connect and whose CPU it counts, from one reading of the roles. */
export interface BenchEndpoint {
  url: URL;
  processes: CountedProcess[];
}

/**
 * Where a bench's clients connect, and the processes to count (as {@link benchProcesses}): a
 * queue the broker declared is reached where the broker said; one of our clusters at the member
 * that reports itself leader (waited for up to `leaderWithinMs`), so the client's work lands on
 * the leader and the followers' columns hold replication alone; any other broker at its URL.
 * The leader and the labels come from the same reading of the roles, so they agree.
 */
export async function benchEndpoint(
  broker: RunningBroker,
  declared?: DeclaredQueue,
  leaderWithinMs = 30_000,
): Promise<BenchEndpoint> {
  const client: CountedProcess = { label: 'client' };
  if (declared !== undefined || broker.members === undefined)
    return { url: declared?.url ?? broker.url, processes: await benchProcesses(broker, 'broker', declared) };
  const members = broker.members;
  const deadline = Date.now() + leaderWithinMs;
  for (;;) {
    const roles = await Promise.all(members.map(roleOf));
    const leader = members[roles.indexOf('leader')];
    if (leader !== undefined)
      return { url: new URL(leader.url), processes: [client, ...labelledByRole(members, roles, '')] };
    if (Date.now() > deadline)
      throw new Error(`no member reported itself leader within ${leaderWithinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The client (this process), then the broker's process or its members; for a queue the broker
 * declared (`declared`), the processes it named for that queue.
 */
export async function benchProcesses(
  broker: RunningBroker,
  brokerLabel = 'broker',
  declared?: DeclaredQueue,
): Promise<CountedProcess[]> {
  const client: CountedProcess = { label: 'client' };
  if (declared !== undefined) return [client, ...declared.processes];
  if (broker.members !== undefined) return [client, ...(await memberProcesses(broker.members))];
  return broker.pid === undefined ? [client] : [client, { label: brokerLabel, pid: broker.pid }];
}
