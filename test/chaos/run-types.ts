/**
 * The shapes of a chaos run (run.ts): its options, its summary and its report, and the fault
 * families of a seeded schedule when none are named. Kept apart so callers and the runner's
 * parts share them without importing the runner.
 */
import type { MemberFederationLink } from '../../src/broker.js';
import type { TotalQueueResult } from './checker.js';
import type { History } from './history.js';
import type { NemesisEvent } from './nemesis.js';
import type { FaultKind, NemesisStep } from './schedule.js';
import type { SubscriptionResult, TopicSummary } from './topics.js';
import type { ConsumerInfo } from './workers.js';

/** The fault families of a seeded schedule when none are named. */
export const DEFAULT_FAULTS: readonly FaultKind[] = ['kill', 'pause', 'partition', 'corrupt'];

export interface ChaosOptions {
  /** the system under test. Default 'quorate' (the reference cluster). */
  target?: 'quorate' | 'rabbitmq';
  /** members (quorate: 3 or 5; rabbitmq: always 3). Default 3. */
  nodes?: number;
  /** how long producers send while the nemesis runs, ms */
  durationMs: number;
  /** seeds the nemesis schedule (and the proxies' lossy links). Default 1. */
  seed?: number;
  /** fault families for a seeded schedule. Default: kill, pause, partition, corrupt. */
  faults?: readonly FaultKind[];
  /**
   * A fixed schedule instead of a seeded one (CI). It runs to its end: the producers go on past
   * `durationMs` until its last fault is over (on a loaded machine each wait for a member to serve
   * again takes longer, and a schedule cut short would leave faults out of the run).
   */
  schedule?: readonly NemesisStep[];
  /** time before the first fault, ms. Default 2_000. */
  warmupMs?: number;
  /** producer connections. Default 3. */
  producers?: number;
  /** queues; each has one consumer connection (two with competingConsumers). Default 2. */
  queues?: number;
  competingConsumers?: boolean;
  /** two federated quorate clusters instead of one (federation.ts). Default false. */
  federation?: boolean;
  /**
   * federation: consumers on both clusters (the scenario; default) or on the downstream
   * only (every message crosses the link: what docs/federation.md#exactly-once promises)
   */
  consumersOn?: 'both' | 'downstream';
  /** federation: the downstream's fixed schedule (default: `schedule`, or one drawn from seed + 1) */
  downstreamSchedule?: readonly NemesisStep[];
  /**
   * federation: the producers also publish to a topic west federates, read by a durable
   * subscription on each cluster (topics.ts). Default false.
   */
  topic?: boolean;
  /** messages per second per producer. Default 40. */
  rate?: number;
  /** sends in flight per producer. Default 8. */
  window?: number;
  /** each send's deadline, ms. Default 60_000. */
  sendTimeoutMs?: number;
  /** the drain ends when everything acknowledged arrived and nothing came for quietMs. Default 3_000. */
  quietMs?: number;
  /** the drain gives up after this long, ms. Default 120_000. */
  drainTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ChaosRunSummary {
  target: string;
  nodes: number;
  seed: number;
  faults: string[];
  durationMs: number;
  wallMs: number;
  enqueue: { invoked: number; ok: number; fail: number; info: number };
  dequeued: number;
  /** receiver dedup: redeliveries suppressed, and duplicates before/after it (single consumer per queue) */
  receiverDedup: { suppressed: number; duplicatedBeforeDedup: number; duplicatedAfterDedup: number };
  failovers: number;
  /** every cluster's nemesis; with federation each event's fault is prefixed `east:` / `west:` */
  nemesis: NemesisEvent[];
  /** federation: messages handed out by each cluster's consumers */
  receivedPerCluster?: Record<string, number>;
  /** `topic`: the publishes and each subscription's counts */
  topic?: TopicSummary;
  /** federation: the downstream's links at the end of the drain, as each member reports them */
  federationLinks?: MemberFederationLink[];
  drained: boolean;
  recovered: boolean;
  /** each consumer (and subscriber) at the end of the drain (diagnoses a stalled one) */
  consumers: ConsumerInfo[];
}

export interface ChaosReport {
  result: TotalQueueResult;
  summary: ChaosRunSummary;
  /** `topic`: each subscription's check, its lists included */
  subscriptions?: SubscriptionResult[];
  /**
   * valid with lost 0, unexpected 0, duplicated 0, and at least one acknowledged enqueue: the
   * queues' check and every subscription's
   */
  passed: boolean;
  history: History;
  /** `topic`: the publishes and the subscriptions' hand-outs (on the same clock as `history`) */
  topicHistory?: History;
}
