/**
 * The chaos runner (issue 7.1/7.2): concurrent producers and consumers on our client record a
 * history while a seeded nemesis injects faults into a cluster; the run then heals, drains every
 * queue and checks the history with the Jepsen total-queue checker.
 *
 *   npm run chaos -- --nodes 3|5 --duration S --seed N --faults kill,pause,partition,restart-all,slow
 *   npm run chaos -- --target rabbitmq --duration S --seed N --faults kill
 *   npm run chaos -- --federation --duration S --seed N --faults kill,pause,partition
 *   npm run chaos -- --federation --topic --duration S --seed N --faults kill,pause,partition
 *
 * `--federation` (federation.ts): two clusters, east and west (west federates every queue from
 * east), a nemesis on each; the producers send to east, every queue has a consumer on each
 * cluster, and the checker judges the union of both (competing consumers' rule). `--topic`
 * (topics.ts): the producers also publish to a topic west federates, with a durable subscription
 * on each cluster; each subscription must get every acknowledged publish once.
 *
 * stdout: the checker's JSON (exact keys `attempt-count`, `acknowledged-count`, `ok-count`,
 * `lost-count`, `unexpected-count`, `duplicated-count`, `recovered-count`, `valid`, plus
 * `details`). stderr: progress and a run summary (nemesis log, client counts, receiver dedup).
 * Exit 0 only when valid with lost 0, unexpected 0 and duplicated 0 (and something was
 * acknowledged: a run that acknowledged nothing proves nothing), for the queues and (`--topic`)
 * every subscription.
 *
 * `runChaos(options)` is the same run as a function (test/integration/chaos-ci.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { MemberFederationLink } from '../../src/broker.js';
import type { Connection, Receiver } from '../../src/index.js';
import { checkTotalQueue, passesRun, type TotalQueueResult } from './checker.js';
import { History } from './history.js';
import { type NemesisEvent, runNemesis } from './nemesis.js';
import { startQueueConsumers } from './queue-consumers.js';
import { FAULT_KINDS, type FaultKind, type NemesisStep, parseFaults, randomSchedule } from './schedule.js';
import { startSides } from './sides.js';
import type { ChaosTarget } from './target.js';
import { sleep } from './target.js';
import {
  CHAOS_TOPIC,
  type SubscriptionResult,
  subscribeTopic,
  type TopicSummary,
  type TopicWorkload,
} from './topics.js';
import { type ConsumerInfo, connectWorker, type ProducerStats, runProducer } from './workers.js';

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

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  const nodes = o.target === 'rabbitmq' ? 3 : (o.nodes ?? 3);
  const seed = o.seed ?? 1;
  const faults = o.faults ?? DEFAULT_FAULTS;
  if (o.topic && !o.federation) throw new Error('--topic runs with --federation');
  const wallStart = Date.now();
  log(
    `starting ${o.federation ? 'two federated quorate clusters' : (o.target ?? 'quorate')} with ${nodes} members...`,
  );
  const queueNames = Array.from({ length: o.queues ?? 2 }, (_, i) => `chaos-${seed}-q${i}`);
  const { sides, stop } = await startSides({
    target: o.target ?? 'quorate',
    federation: o.federation ?? false,
    consumersOn: o.consumersOn ?? 'both',
    nodes,
    seed,
    queues: queueNames,
    topics: o.topic ? [CHAOS_TOPIC] : [],
  });
  const target = sides[0]!.target;
  const receivedPerCluster: Record<string, number> = {};
  const history = new History();
  const conns: Connection[] = [];
  const receivers: Receiver[] = [];
  const consumerInfo: ConsumerInfo[] = [];
  let topic: TopicWorkload | undefined;
  let federationLinks: MemberFederationLink[] | undefined;
  let failovers = 0;
  let nemesisEvents: NemesisEvent[] = [];
  let drained = false;
  let recovered = false;
  const producerStats: ProducerStats[] = [];
  try {
    for (const side of sides) await side.target.prepare(queueNames);
    const addresses = queueNames.map((q) => target.address(q));
    const worker = async (containerId: string, on: ChaosTarget = target) => {
      const c = await connectWorker({ urls: on.urls, extra: on.connectOptions, containerId, log });
      c.on('failover', () => failovers++);
      conns.push(c);
      return c;
    };

    // consumers first, so nothing piles up
    const seen = new Set<string>();
    let lastMessageAt = Date.now();
    const queueConsumers = await startQueueConsumers({
      sides,
      addresses,
      perQueue: o.competingConsumers ? 2 : 1,
      seed,
      // federation: no receiver dedup, so that what the brokers deliver twice reaches the checker
      dedup: !o.federation,
      connect: worker,
      history,
      seen,
      onMessage: (side) => {
        lastMessageAt = Date.now();
        receivedPerCluster[side] = (receivedPerCluster[side] ?? 0) + 1;
      },
      log,
    });
    receivers.push(...queueConsumers.receivers);

    // topic: every subscription exists before the first publish
    if (o.topic) {
      topic = await subscribeTopic({
        sides,
        seed,
        clock: history,
        connect: worker,
        onMessage: () => {
          lastMessageAt = Date.now();
        },
        log,
      });
    }

    const acknowledged = new Set<string>();
    const stopAt = Date.now() + o.durationMs;
    const fixedSchedule = o.schedule !== undefined;
    let nemesisDone = false;
    const producerConns: Connection[] = [];
    for (let i = 0; i < (o.producers ?? 3); i++) producerConns.push(await worker(`chaos-${seed}-p${i}`));
    const pace = {
      rate: o.rate ?? 40,
      window: o.window ?? 8,
      sendTimeoutMs: o.sendTimeoutMs ?? 60_000,
      shouldStop: () => Date.now() >= stopAt && (nemesisDone || !fixedSchedule),
    };
    const producers = producerConns.map((conn, i) =>
      runProducer({ process: `p${i}`, conn, addresses, history, ...pace, acknowledged }).then((s) => {
        producerStats.push(s);
        return s;
      }),
    );
    const publishers = topic?.publish({ conns: producerConns, ...pace }) ?? [];

    // the nemesis of each cluster: a fixed schedule, or one drawn from the seed (seed + i for side i)
    const stepsOf = (i: number): readonly NemesisStep[] =>
      (i > 0 ? (o.downstreamSchedule ?? o.schedule) : o.schedule) ??
      randomSchedule({
        seed: seed + i,
        faults,
        ids: sides[i]!.target.ids,
        durationMs: Math.max(0, o.durationMs - (o.warmupMs ?? 2_000)),
      });
    log(`nemesis schedule: ${sides.map((_, i) => stepsOf(i).length).join(' + ')} step(s)`);
    const abort = new AbortController();
    // a seeded schedule stops at the end of the run; a fixed one runs to its end
    const stopTimer = fixedSchedule
      ? undefined
      : setTimeout(() => abort.abort(), Math.max(0, stopAt - Date.now()));
    await sleep(o.warmupMs ?? 2_000);
    const producerMember = () => {
      const url = producerConns[0]?.url;
      return url ? target.memberOfUrl(url) : undefined;
    };
    const perSide = await Promise.all(
      sides.map((side, i) =>
        runNemesis({
          target: side.target,
          steps: stepsOf(i),
          clientMember: side.clientMember ?? producerMember,
          now: () => history.now(),
          signal: abort.signal,
          log: side.name ? (line) => log(`${side.name} ${line}`) : log,
        }).then((events) =>
          side.name ? events.map((e) => ({ ...e, fault: `${side.name}: ${e.fault}` })) : events,
        ),
      ),
    );
    nemesisEvents = perSide.flat().sort((a, b) => a.start - b.start);
    nemesisDone = true;
    clearTimeout(stopTimer);

    // heal everything, let the producers finish (their sends settle or reach their deadline)
    for (const side of sides) await side.target.recover();
    const healthy = await Promise.all(sides.map((side) => side.target.waitHealthy(120_000)));
    recovered = healthy.every(Boolean);
    log(`cluster ${recovered ? 'serves again' : 'did NOT recover within 120 s'}; waiting for producers...`);
    await Promise.all([...producers, ...publishers]);

    // final drain: everything acknowledged arrived (at every subscription too), and nothing more for quietMs
    history.draining = true;
    if (topic) topic.history.draining = true;
    lastMessageAt = Date.now();
    const quietMs = o.quietMs ?? 3_000;
    const drainDeadline = Date.now() + (o.drainTimeoutMs ?? 120_000);
    log(`draining (${acknowledged.size} acknowledged, ${seen.size} seen so far)...`);
    for (;;) {
      const allSeen = [...acknowledged].every((v) => seen.has(v)) && (topic?.allReceived() ?? true);
      if (allSeen && Date.now() - lastMessageAt >= quietMs) {
        drained = true;
        break;
      }
      if (Date.now() > drainDeadline) break;
      await sleep(100);
    }
    const downstream = sides.find((side) => side.federationLinks);
    federationLinks = await downstream?.federationLinks?.().catch(() => undefined);
    consumerInfo.push(...queueConsumers.infos.map((info) => info()), ...(topic?.consumers() ?? []));
    for (const r of receivers) await r.close({ timeoutMs: 5_000 }).catch(() => undefined);
    await Promise.all(queueConsumers.done);
    await topic?.close();
  } finally {
    await Promise.all(conns.map((c) => c.close({ timeoutMs: 3_000 }).catch(() => undefined)));
    await stop().catch((e: unknown) => log(`stopping the target failed: ${String(e)}`));
  }

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

// ------------------------------------------------------------------ CLI

const LIST_CAP = 50;

/** The checker result with its detail lists capped (a bad run can lose thousands). */
export function printableResult(r: TotalQueueResult): unknown {
  const cap = <T>(xs: T[]) =>
    xs.length > LIST_CAP ? [...xs.slice(0, LIST_CAP), `... ${xs.length - LIST_CAP} more`] : xs;
  const d = r.details;
  return {
    ...r,
    details: {
      ...d,
      lost: cap(d.lost.map(String)),
      unexpected: cap(d.unexpected.map(String)),
      duplicated: cap(d.duplicated.map(String)),
      recovered: cap(d.recovered.map(String)),
      dequeuedAfterFail: cap(d.dequeuedAfterFail.map(String)),
    },
  };
}

function consumersOn(v: string): 'both' | 'downstream' {
  if (v !== 'both' && v !== 'downstream') throw new Error(`--consumers-on both|downstream, got ${v}`);
  return v;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      target: { type: 'string', default: 'quorate' },
      nodes: { type: 'string', default: '3' },
      duration: { type: 'string', default: '60' },
      seed: { type: 'string', default: '1' },
      faults: { type: 'string', default: DEFAULT_FAULTS.join(',') },
      producers: { type: 'string', default: '3' },
      queues: { type: 'string', default: '2' },
      rate: { type: 'string', default: '40' },
      competing: { type: 'boolean', default: false },
      federation: { type: 'boolean', default: false },
      'consumers-on': { type: 'string', default: 'both' },
      topic: { type: 'boolean', default: false },
      history: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stderr.write(
      `npm run chaos -- [--target quorate|rabbitmq] [--nodes 3|5] [--duration S] [--seed N]\n` +
        `  [--faults ${FAULT_KINDS.join(',')}] [--producers N] [--queues N] [--rate MSG_PER_S]\n` +
        `  [--competing] [--federation [--consumers-on both|downstream] [--topic]] [--history FILE.json]\n`,
    );
    return 0;
  }
  const target = values.target === 'rabbitmq' ? 'rabbitmq' : 'quorate';
  if (values.target !== target) throw new Error(`unknown --target ${values.target}`);
  const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  const report = await runChaos({
    target,
    nodes: Number(values.nodes),
    durationMs: Number(values.duration) * 1000,
    seed: Number(values.seed),
    faults: parseFaults(values.faults),
    producers: Number(values.producers),
    queues: Number(values.queues),
    rate: Number(values.rate),
    competingConsumers: values.competing,
    federation: values.federation,
    consumersOn: consumersOn(values['consumers-on']),
    topic: values.topic,
    log,
  });
  if (values.history) {
    // with --topic both histories, under their names; else the queue history alone, as always
    const topicOps = report.topicHistory?.ops;
    const ops = report.history.ops;
    writeFileSync(values.history, JSON.stringify(topicOps ? { queues: ops, topic: topicOps } : ops));
  }
  process.stderr.write(`${JSON.stringify(report.summary, null, 2)}\n`);
  // a failed subscription's lists (the summary has its counts only)
  for (const s of report.subscriptions ?? []) {
    if (!passesRun(s.result)) {
      process.stderr.write(`subscription ${s.name}: ${JSON.stringify(printableResult(s.result), null, 2)}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify(printableResult(report.result), null, 2)}\n`);
  log(report.passed ? 'PASS' : 'FAIL');
  return report.passed ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`chaos run failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(2);
    },
  );
}
