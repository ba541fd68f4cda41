/**
 * The checking phase of a chaos run (run.ts): the Jepsen total-queue check of the history (and of
 * each topic subscription), and the run's summary and verdict built from what the run recorded.
 */
import type { MemberFederationLink } from '../../src/broker.js';
import type { Receiver } from '../../src/index.js';
import { checkTotalQueue, passesRun } from './checker.js';
import type { History } from './history.js';
import type { NemesisEvent } from './nemesis.js';
import type { ChaosOptions, ChaosReport, ChaosRunSummary } from './run-types.js';
import type { FaultKind } from './schedule.js';
import type { ChaosTarget } from './target.js';
import type { TopicWorkload } from './topics.js';
import type { ConsumerInfo } from './workers.js';

/** What a run recorded, once its clusters are stopped. */
export interface RunRecord {
  o: ChaosOptions;
  /** the producers' cluster */
  target: ChaosTarget;
  nodes: number;
  seed: number;
  faults: readonly FaultKind[];
  /** Date.now() at the start of the run */
  wallStart: number;
  history: History;
  topic: TopicWorkload | undefined;
  receivers: readonly Receiver[];
  failovers: number;
  nemesisEvents: NemesisEvent[];
  receivedPerCluster: Record<string, number>;
  federationLinks: MemberFederationLink[] | undefined;
  drained: boolean;
  recovered: boolean;
  consumerInfo: ConsumerInfo[];
}

/** Checks the run's histories and reports: the checker's result, the summary, and whether it passed. */
export function checkRun({
  o,
  target,
  nodes,
  seed,
  faults,
  wallStart,
  history,
  topic,
  receivers,
  failovers,
  nemesisEvents,
  receivedPerCluster,
  federationLinks,
  drained,
  recovered,
  consumerInfo,
}: RunRecord): ChaosReport {
  // federation: consumers on both clusters compete, and without receiver dedup a redelivery after
  // an accept in doubt is at-least-once; either way only a hand-out after a confirmed accept is a duplicate
  const result = checkTotalQueue(history.ops, {
    singleConsumerPerQueue: !o.competingConsumers && !o.federation,
  });
  const topicCheck = topic?.check();
  const suppressed = receivers.reduce((n, r) => n + r.duplicatesSuppressed, 0);
  const summary: ChaosRunSummary = {
    target: o.federation ? 'quorate federation (east -> west)' : target.name,
    nodes,
    seed,
    faults: [...faults],
    durationMs: o.durationMs,
    wallMs: Date.now() - wallStart,
    enqueue: {
      invoked: history.count('invoke', 'enqueue'),
      ok: history.count('ok', 'enqueue'),
      fail: history.count('fail', 'enqueue'),
      info: history.count('info', 'enqueue'),
    },
    dequeued: history.count('ok', 'dequeue'),
    receiverDedup: {
      suppressed,
      duplicatedBeforeDedup: result.details.rawDuplicatedCount + suppressed,
      duplicatedAfterDedup: result.details.rawDuplicatedCount,
    },
    failovers,
    nemesis: nemesisEvents,
    ...(o.federation ? { receivedPerCluster } : {}),
    ...(topicCheck ? { topic: topicCheck.summary } : {}),
    ...(federationLinks ? { federationLinks } : {}),
    drained,
    recovered,
    consumers: consumerInfo,
  };
  const subscriptions = topicCheck?.subscriptions;
  const passed = passesRun(result) && (subscriptions ?? []).every((s) => passesRun(s.result));
  return {
    result,
    summary,
    passed,
    history,
    ...(topic && subscriptions ? { subscriptions, topicHistory: topic.history } : {}),
  };
}
