/**
 * The narrow view of a broker the monitoring endpoints read: counters, connections and the
 * queues of the (replicated) state. Nothing here reaches into links or the store.
 */
import type { BrokerServer } from '../server/broker-server.js';

/** One queue's row as the metrics and `/api/queues` see it. */
export interface QueueRow {
  name: string;
  messages: number;
  bytes: number;
  unacknowledged: number;
  /** Consumer links attached on this member. */
  consumers: number;
  /** Messages added to it since the state started (whole cluster: every member applies every event). */
  added: number;
  /** Deliveries from it since the state started (whole cluster). */
  acquisitions: number;
}

/** One topic and the queues that are its subscriptions (docs/topics.md). */
export interface TopicRow {
  name: string;
  subscriptions: string[];
}

export interface MonitoredBroker {
  readonly server: Pick<BrokerServer, 'activity' | 'stats' | 'connections' | 'queueAdmin'>;
  queueRows(): QueueRow[];
  topicRows(): TopicRow[];
}

export function monitoredBroker(server: BrokerServer): MonitoredBroker {
  return {
    server,
    queueRows() {
      const consumers = server.consumersByQueue();
      const state = server.backend.state;
      return state.listQueues().map((q) => {
        const counts = state.queueApplyCounts(q.name);
        return {
          name: q.name,
          messages: q.depth,
          bytes: q.bytes,
          unacknowledged: q.acquired,
          consumers: consumers.get(q.name) ?? 0,
          added: counts?.added ?? 0,
          acquisitions: counts?.acquisitions ?? 0,
        };
      });
    },
    topicRows() {
      const topics = new Map<string, string[]>();
      const queues = server.backend.state.listQueues();
      for (const q of queues) if (q.options.topic) topics.set(q.name, []);
      for (const q of queues) {
        const topic = q.options.subscription?.topic;
        if (topic !== undefined) topics.get(topic)?.push(q.name);
      }
      return [...topics].map(([name, subscriptions]) => ({ name, subscriptions }));
    },
  };
}
