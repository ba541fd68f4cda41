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

import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { MemberFederationLink } from '../../src/broker.js';
import type { Connection, Receiver } from '../../src/index.js';
import { checkRun } from './check-run.js';
import { injectFaults } from './fault-injection.js';
import { History } from './history.js';
import type { NemesisEvent } from './nemesis.js';
import { printReport } from './print-report.js';
import { startQueueConsumers } from './queue-consumers.js';
import { type ChaosOptions, type ChaosReport, DEFAULT_FAULTS } from './run-types.js';
import { FAULT_KINDS, parseFaults } from './schedule.js';
import { startSides } from './sides.js';
import type { ChaosTarget } from './target.js';
import { CHAOS_TOPIC, subscribeTopic, type TopicWorkload } from './topics.js';
import { type ConsumerInfo, connectWorker, type ProducerStats, runProducer } from './workers.js';

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

    // the faults (fault-injection.ts): each cluster's nemesis, after the warm-up, while the producers send
    const producerMember = () => {
      const url = producerConns[0]?.url;
      return url ? target.memberOfUrl(url) : undefined;
    };
    nemesisEvents = await injectFaults({
      o,
      sides,
      seed,
      faults,
      stopAt,
      fixedSchedule,
      producerMember,
      now: () => history.now(),
      log,
    });
    nemesisDone = true;

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

  return checkRun({
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
  });
}

// ------------------------------------------------------------------ CLI

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
  printReport(report, values.history);
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
