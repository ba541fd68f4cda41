/** The cluster facts of a single-node broker: one member, always its own leader. */
import type { BrokerBackend } from '../server/backend.js';
import type { LocalBackend } from '../server/local-backend.js';
import type { ClusterSource, ClusterStatus } from './types.js';

export function singleNodeSource(opts: {
  /** The member name shown (the broker's container-id). */
  member: string;
  amqpUrl: string;
  httpUrl: () => string | null;
  backend: BrokerBackend;
  /** The local store's backend (absent when the broker runs over a backend given to it). */
  local: LocalBackend | undefined;
}): ClusterSource {
  return {
    status(): ClusterStatus {
      const index = opts.local?.stats()?.index ?? opts.backend.state.appliedCount;
      return {
        member: opts.member,
        clusterId: 'single',
        role: 'single',
        term: 0,
        leader: opts.member,
        quorate: true,
        serving: opts.backend.serving,
        commitIndex: index,
        appliedIndex: index,
        members: [
          {
            id: opts.member,
            url: opts.amqpUrl,
            httpUrl: opts.httpUrl(),
            reachable: true,
            lag: 0,
            // the monitoring server fills in its own broker's counts (client-counts.ts)
            connections: null,
            consumers: null,
          },
        ],
      };
    },
    leaderChanges: () => 0,
    fsyncLatency: () => opts.local?.fsyncLatency,
  };
}
