/**
 * The cluster-wide client counts of `/api/overview` (docs/monitoring.md#cluster-counts): this
 * member's own counts go into its entry of the member list, the others' are what their status
 * messages said (null while unknown), and the totals add up the known ones, naming the rest.
 */
import type { ClusterStatus, Overview } from './types.js';

/** This member's own counts. */
export interface OwnClientCounts {
  connections: number;
  consumers: number;
}

type CountsPart = Pick<
  Overview,
  'members' | 'connections' | 'consumers' | 'clusterConnections' | 'clusterConsumers' | 'uncountedMembers'
>;

/** `status`'s member list with `own` filled in for this member, and the cluster totals. */
export function withClientCounts(status: ClusterStatus, own: OwnClientCounts): CountsPart {
  const members = status.members.map((m) =>
    m.id === status.member ? { ...m, connections: own.connections, consumers: own.consumers } : m,
  );
  let clusterConnections = 0;
  let clusterConsumers = 0;
  const uncountedMembers: string[] = [];
  for (const m of members) {
    if (m.connections === null || m.consumers === null) {
      uncountedMembers.push(m.id);
      continue;
    }
    clusterConnections += m.connections;
    clusterConsumers += m.consumers;
  }
  return {
    members,
    connections: own.connections,
    consumers: own.consumers,
    clusterConnections,
    clusterConsumers,
    uncountedMembers,
  };
}
