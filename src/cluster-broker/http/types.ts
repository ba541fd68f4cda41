/**
 * The JSON documents of the monitoring endpoints (docs/monitoring.md) and what the HTTP server
 * reads them from. Key names are a public contract: tools and the status page depend on them.
 */
import type { FederationLinkState } from '../federation/link-state.js';
import type { LatencyHistogram } from '../files/latency-histogram.js';

/** One member as this member sees it (`GET /api/overview` -> `members`). */
export interface MemberEntry {
  /** Its member id. */
  id: string;
  /** Its AMQP address (`amqp://host:port`); null until learned from its status messages. */
  url: string | null;
  /** Its monitoring address; null when it has none or it is not known yet. */
  httpUrl: string | null;
  /** Itself: true. Others: heard from within the last 1.5 s. */
  reachable: boolean;
  /** Log entries it is behind the most advanced commit this member knows of; null: unknown. */
  lag: number | null;
  /**
   * Client connections open on it: this member's own count, another's as its last status message
   * said; null when unknown (unreachable, or a member that does not report it).
   */
  connections: number | null;
  /** Consumer links attached on it, known as `connections` is; null when unknown. */
  consumers: number | null;
}

/** The cluster part of `GET /api/overview`, from a cluster member or a single node. */
export interface ClusterStatus {
  /** This member's id. */
  member: string;
  /** The cluster's id ('single' for a single-node broker). */
  clusterId: string;
  /** 'leader' | 'follower' | 'candidate', or 'single' for a single-node broker. */
  role: string;
  /** Current Raft term as this member knows it. */
  term: number;
  /** Leader id, null while there is none. */
  leader: string | null;
  /** Whether this member is part of a quorum (a majority of the members) now. */
  quorate: boolean;
  /** Accepting clients now (quorate and caught up). */
  serving: boolean;
  /** Index of the last log entry known to be committed. */
  commitIndex: number;
  /** Index of the last log entry applied to this member's state. */
  appliedIndex: number;
  /** Every member of the cluster as this member sees it, itself included. */
  members: MemberEntry[];
}

/** `GET /api/overview`: the cluster status plus queue, connection and consumer counts. */
export interface Overview extends ClusterStatus {
  /** Queues in the (replicated) state. */
  queues: number;
  /** Client connections open on this member. */
  connections: number;
  /** Consumer links attached on this member. */
  consumers: number;
  /** Client connections of the whole cluster: the sum over the members whose count is known. */
  clusterConnections: number;
  /** Consumer links of the whole cluster: the sum over the members whose count is known. */
  clusterConsumers: number;
  /** Members whose counts are unknown (left out of both sums); empty: the sums are complete. */
  uncountedMembers: string[];
  /** Whole seconds since the monitoring server started. */
  uptimeSeconds: number;
}

/** `GET /api/queues` -> `queues[]`. */
export interface QueueEntry {
  /** The queue's name (its address). */
  name: string;
  /** Messages in the queue (available and unacknowledged). */
  messages: number;
  /** Total size in bytes of the messages in the queue. */
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

/** `GET /api/queues`: every queue (topic subscriptions included), and every topic with its subscriptions. */
export interface QueuesDocument {
  /** Every queue, one entry each. */
  queues: QueueEntry[];
  /** Every topic (docs/topics.md) and the queues that are its subscriptions. */
  topics: Array<{
    /** The topic's name. */
    name: string;
    /** Its subscriptions' names. */
    subscriptions: string[];
  }>;
}

/** `/api/federation`: this broker's federation links (docs/federation.md#operator). */
export interface FederationDocument {
  /** One entry per (upstream, queue) and (upstream, topic), as `handle.federation()` reports it. */
  links: FederationLinkState[];
}

/** The cluster facts the monitoring server needs from whoever embeds it. */
export interface ClusterSource {
  /** The cluster status of this member now. */
  status(): ClusterStatus;
  /** Times this member saw the leader change to another member (0 on a single node). */
  leaderChanges(): number;
  /** Durations of the log's fsyncs; undefined without a disk. */
  fsyncLatency(): LatencyHistogram | undefined;
}
