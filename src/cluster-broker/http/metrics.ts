/**
 * `GET /metrics`: the Prometheus text format through prom-client. Every value is read at scrape
 * time from counters the broker keeps anyway (`collect` callbacks), so the hot path pays nothing
 * for the exporter. Names follow Prometheus conventions (`quorate_` prefix, `_total` counters,
 * base units); the list is in docs/monitoring.md.
 */
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { LatencyHistogram } from '../files/latency-histogram.js';
import type { MonitoredBroker, QueueRow } from './monitored-broker.js';
import type { ClusterSource } from './types.js';

type Read = () => number;

/** `quorate_messages_<key>_total`: the broker's activity total of that name, and its help text. */
const MESSAGE_TOTALS = {
  published: 'Messages enqueued through this member (duplicates excluded).',
  delivered: 'Messages sent to consumers by this member, redeliveries included.',
  acknowledged: 'Deliveries accepted by consumers of this member.',
  rejected: 'Deliveries rejected by consumers of this member.',
  redelivered: 'Deliveries of messages acquired before.',
  deduplicated: 'Publishes recognised as duplicates by message-id.',
} as const;

export class BrokerMetrics {
  readonly registry = new Registry();

  constructor(broker: MonitoredBroker, cluster: ClusterSource) {
    const r = this.registry;
    // the event-loop delay histogram samples every 100 ms, not every 10 ms (prom-client's
    // default): that timer was a wake-up of its own a hundred times a second in an idle member
    // (docs/cluster-member.md#timers); a stall of 100 ms or more is still always seen
    collectDefaultMetrics({ register: r, eventLoopMonitoringPrecision: 100 });
    const totals = broker.server.activity.totals;
    const stats = (): ReturnType<MonitoredBroker['server']['stats']> => broker.server.stats();

    const counter = (name: string, help: string, read: Read): void => {
      new Counter({
        name,
        help,
        registers: [r],
        collect() {
          // the broker's own counter is the truth: publish its absolute value
          this.reset();
          this.inc(read());
        },
      });
    };
    const gauge = (name: string, help: string, read: Read): void => {
      new Gauge({
        name,
        help,
        registers: [r],
        collect() {
          this.set(read());
        },
      });
    };

    for (const [key, help] of Object.entries(MESSAGE_TOTALS) as [keyof typeof MESSAGE_TOTALS, string][])
      counter(`quorate_messages_${key}_total`, help, () => totals[key]);
    gauge('quorate_connections', 'Client connections open on this member.', () => stats().connections);
    counter(
      'quorate_connections_accepted_total',
      'Client connections accepted.',
      () => stats().connectionsAccepted,
    );
    counter(
      'quorate_connections_refused_total',
      'Client connections refused (limits).',
      () => stats().connectionsRefused,
    );
    gauge('quorate_consumers', 'Consumer links attached on this member.', () => stats().consumers);

    const queueGauge = (name: string, help: string, pick: (q: QueueRow) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['queue'],
        registers: [r],
        collect() {
          this.reset();
          for (const q of broker.queueRows()) this.set({ queue: q.name }, pick(q));
        },
      });
    };
    queueGauge(
      'quorate_queue_messages',
      'Messages in the queue (available and unacknowledged).',
      (q) => q.messages,
    );
    queueGauge('quorate_queue_bytes', 'Sum of the sizes of the messages in the queue.', (q) => q.bytes);
    queueGauge(
      'quorate_queue_unacknowledged',
      'Messages delivered and not yet settled.',
      (q) => q.unacknowledged,
    );
    queueGauge('quorate_queue_consumers', 'Consumer links on this member.', (q) => q.consumers);
    const queueCounter = (
      name: string,
      help: string,
      pick: (q: { published: number; delivered: number }) => number,
    ): void => {
      new Counter({
        name,
        help,
        labelNames: ['queue'],
        registers: [r],
        collect() {
          this.reset();
          for (const [queue, a] of broker.server.activity.queueEntries()) this.inc({ queue }, pick(a));
        },
      });
    };
    queueCounter(
      'quorate_queue_published_total',
      'Messages enqueued into the queue through this member.',
      (a) => a.published,
    );
    queueCounter(
      'quorate_queue_delivered_total',
      'Messages of the queue sent to consumers by this member.',
      (a) => a.delivered,
    );

    gauge('quorate_raft_term', 'Current Raft term (0 on a single node).', () => cluster.status().term);
    gauge(
      'quorate_raft_commit_index',
      'Highest log index known committed.',
      () => cluster.status().commitIndex,
    );
    gauge(
      'quorate_raft_applied_index',
      'Highest log index applied to the broker state.',
      () => cluster.status().appliedIndex,
    );
    gauge('quorate_raft_is_leader', '1 while this member leads.', () =>
      cluster.status().role === 'leader' ? 1 : 0,
    );
    counter('quorate_raft_leader_changes_total', 'Times this member saw the leader change.', () =>
      cluster.leaderChanges(),
    );
    gauge('quorate_quorate', '1 while this member is part of a quorate majority.', () =>
      cluster.status().quorate ? 1 : 0,
    );
    gauge('quorate_serving', '1 while this member accepts clients.', () =>
      cluster.status().serving ? 1 : 0,
    );
    const peerGauge = (
      name: string,
      help: string,
      pick: (m: { lag: number | null; reachable: boolean }) => number | null,
    ): void => {
      new Gauge({
        name,
        help,
        labelNames: ['member'],
        registers: [r],
        collect() {
          this.reset();
          const status = cluster.status();
          for (const m of status.members) {
            if (m.id === status.member) continue;
            const v = pick(m);
            if (v !== null) this.set({ member: m.id }, v);
          }
        },
      });
    };
    peerGauge(
      'quorate_raft_peer_lag_entries',
      "Log entries the member is behind (this member's view).",
      (m) => m.lag,
    );
    peerGauge('quorate_raft_peer_reachable', '1 while the member is heard from.', (m) =>
      m.reachable ? 1 : 0,
    );
    r.registerMetric(
      histogramMetric('quorate_fsync_duration_seconds', 'Duration of the log fsyncs.', () =>
        cluster.fsyncLatency(),
      ),
    );
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * A histogram read from our own LatencyHistogram at scrape time. prom-client's Histogram can only
 * be fed observation by observation, and the stores must not depend on the exporter, so this is a
 * metric object of the shape the Registry reads (`name`, `help`, `type`, `get()`).
 */
function histogramMetric(name: string, help: string, source: () => LatencyHistogram | undefined): Metric {
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    collect: undefined,
    reset() {},
    get() {
      const h = source();
      const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> =
        [];
      if (h) {
        let cumulative = 0;
        h.bounds.forEach((le, i) => {
          cumulative += h.counts[i]!;
          values.push({ metricName: `${name}_bucket`, labels: { le }, value: cumulative });
        });
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: h.count });
        values.push({ metricName: `${name}_sum`, labels: {}, value: h.sum });
        values.push({ metricName: `${name}_count`, labels: {}, value: h.count });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
  };
  return metric as unknown as Metric;
}
