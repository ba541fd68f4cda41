/**
 * The JSON documents of the monitoring endpoints (docs/monitoring.md) and what the HTTP server
 * reads them from. Key names are a public contract: tools and the status page depend on them.
 */
import type { LatencyHistogram } from '../store/latency-histogram.js';

/** One member as this member sees it (`GET /api/overview` -> `members`). */
export interface MemberEntry {
  id: string;
  /** Its AMQP address (`amqp://host:port`); null until learned from its status messages. */
  url: string | null;
  /** Its monitoring address; null when it has none or it is not known yet. */
  httpUrl: string | null;
  /** Itself: true. Others: heard from within the last 1.5 s. */
  reachable: boolean;
  /** Log entries it is behind the most advanced commit this member knows of; null: unknown. */
  lag: number | null;
}

/** The cluster part of `GET /api/overview`, from a cluster member or a single node. */
export interface ClusterStatus {
  member: string;
  clusterId: string;
  /** 'leader' | 'follower' | 'candidate', or 'single' for a single-node broker. */
  role: string;
  term: number;
  /** Leader id, null while there is none. */
  leader: string | null;
  quorate: boolean;
  /** Accepting clients now (quorate and caught up). */
  serving: boolean;
  commitIndex: number;
  appliedIndex: number;
  members: MemberEntry[];
}

export interface Overview extends ClusterStatus {
  /** Queues in the (replicated) state. */
  queues: number;
  /** Client connections open on this member. */
  connections: number;
  uptimeSeconds: number;
}

/** `GET /api/queues` -> `queues[]`. */
export interface QueueEntry {
  name: string;
  /** Messages in the queue (available and unacknowledged). */
  messages: number;
  bytes: number;
  /** Consumer links attached to it on this member. */
  consumers: number;
  /** Delivered and not yet settled. */
  unacknowledged: number;
  /** Messages per second added to the queue (whole cluster), over the last 5 s. */
  publishRate: number;
  /** Messages per second delivered from the queue (whole cluster, redeliveries included), over the last 5 s. */
  deliverRate: number;
}

/** `GET /api/queues`: this broker has plain queues only, so `topics` is always empty. */
export interface QueuesDocument {
  queues: QueueEntry[];
  topics: Array<{ name: string; subscriptions: string[] }>;
}

/** The cluster facts the monitoring server needs from whoever embeds it. */
export interface ClusterSource {
  status(): ClusterStatus;
  /** Times this member saw the leader change to another member (0 on a single node). */
  leaderChanges(): number;
  /** Durations of the log's fsyncs; undefined without a disk. */
  fsyncLatency(): LatencyHistogram | undefined;
}
