/**
 * Topic fan-out against separate queues (issue #12's target: a topic with 10 subscribers delivers
 * at least 5x the messages/s of 10 separate queue sends). Our single node with a durable store
 * (fsync before every acknowledgement), the quorate client:
 * - topic: 10 subscribers attached, then one sender publishes N messages to the topic (one commit
 *   per publish, docs/topics.md#commit-point); every subscriber receives and accepts all N;
 * - queues: the same client sends each of the N messages to 10 separate queues (10 sends and 10
 *   commits per message), one receiver per queue receiving and accepting.
 * - sends: the same sends to the 10 queues with nobody receiving: the broker's CPU per send alone,
 *   the yardstick of issue #34's "a topic delivery at most a third of a send's broker CPU".
 * Both deliver 10 x N messages with the same number of unsettled sends in flight (`window`); the
 * figure is messages delivered per second, from the first send to the last delivery, and the ratio.
 * The broker's CPU per topic delivery is the topic round's per delivered message less its share
 * of the publish (a send's broker CPU / subscribers), printed against a send's.
 * `--profile [DIR]` writes CPU profiles (.cpuprofile, open in Chrome DevTools): the broker's
 * (`--cpu-prof`, written when it stops) and this process's (both clients) for each measured run.
 * `--round topic` (or `queues`, or `sends`) runs that round alone (its warm-up included), so the
 * broker's profile, which spans its whole life, holds one kind of work (not `--only`: that is
 * bench/report.ts's flag, and this bench reads the whole command line).
 * `--warm N`: publishes (and sends per queue) of each round's warm-up; default a tenth of
 * `--messages` (at least 100), run twice over (all rounds, then all again: WARM_PASSES). The broker
 * compiles its hot code (V8's optimising compiler, on its worker threads) well into the first
 * measured round at that size, and that CPU is counted: a warm-up as large as the round measures
 * the broker at steady state.
 * `--repeat N` (default 1): the measured rounds N times on the same broker, after the one warm-up,
 * in the same order each time (fresh queue and topic names per repeat); each repeat's lines are
 * printed as one run's, then a line per target figure with its median and range over the repeats,
 * each repeat's own ratio counted. The result's figures (rates, ratios, the broker's CPU per topic
 * delivery) are then those medians, its per-process CPU (`topicCpuUs`...) the first repeat's, and
 * `repeats` holds every repeat's figures.
 *
 *   npx tsx bench/run.ts topics [--messages N] [--subscribers K] [--window W] [--profile [DIR]]
 *     [--round topic|queues|sends] [--warm N] [--repeat N]
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Receiver, Sender } from '../src/index.js';
import { benchProcesses } from './lib/broker-processes.js';
import { type RunningBroker, startOurBroker } from './lib/brokers.js';
import { loadQuorate } from './lib/built-package.js';
import { flagValue } from './lib/flag-value.js';
import { formatCpuPerMessage, measureCpu } from './lib/process-cpu.js';
import { profiled } from './lib/profile.js';
import { receiveAll, sendAll } from './lib/quorate-flow.js';
import { formatSpread, parseRepeat, spread } from './lib/repeats.js';
import { defaultWarm, parseWarm, warmUpPasses } from './lib/warm-option.js';

const { connect } = await loadQuorate();

export interface TopicsOptions {
  log?: (line: string) => void;
  /** Messages published (topic) or sent to each queue. Default 5_000. */
  messages?: number;
  /** Subscribers of the topic / separate queues. Default 10. */
  subscribers?: number;
  /** Unsettled sends in flight, in total. Default 1000. */
  window?: number;
  /** Directory for the CPU profiles (broker and clients); undefined: no profiling. */
  profileDir?: string;
  /** Run this round alone (with its warm-up); undefined: both. */
  round?: RoundName;
  /** Messages of each round's warm-up. Default a tenth of `messages`, at least 100. */
  warm?: number;
  /** Times the measured rounds run, after the one warm-up. Default 1. */
  repeat?: number;
}

/** The rounds: one topic, the same messages to separate queues, those sends with no receiver. */
export type RoundName = 'topic' | 'queues' | 'sends';
const ROUND_NAMES: readonly RoundName[] = ['topic', 'queues', 'sends'];

/** One repeat's figures (the fields of TopicsResult of the same names). */
export type TopicsRepeat = Omit<
  TopicsResult,
  'messages' | 'subscribers' | 'window' | 'repeats' | 'profileDir'
>;

/** One run's figures; with `--repeat N` above 1 the rates and ratios are the repeats' medians. */
export interface TopicsResult {
  messages: number;
  subscribers: number;
  window: number;
  /** Each repeat's figures, in order (one entry without `--repeat`). */
  repeats: TopicsRepeat[];
  /** Deliveries per second (subscribers x messages delivered). */
  topicDeliveredPerSec: number;
  queuesDeliveredPerSec: number;
  /** topic / queues. */
  ratio: number;
  /** CPU per delivered message (microseconds, from the OS): `client` (this process) and `broker`. */
  topicCpuUs: Record<string, number | null>;
  queuesCpuUs: Record<string, number | null>;
  /** CPU per send to a queue nobody receives from (microseconds): `client` and `broker`. */
  sendCpuUs: Record<string, number | null>;
  /**
   * The broker's CPU per topic delivery (microseconds): per delivered message of the topic round
   * less a send's broker CPU / subscribers; null when either round did not run.
   */
  topicDeliveryBrokerUs: number | null;
  /** topicDeliveryBrokerUs / a send's broker CPU (issue #34's target: at most 1/3). */
  topicDeliveryPerSend: number | null;
  profileDir?: string;
}

function argsFromCommandLine(argv: string[]): Partial<TopicsOptions> {
  const opts: Partial<TopicsOptions> = {};
  const value = (flag: string) => flagValue(argv, flag);
  const m = value('--messages');
  if (m !== undefined) opts.messages = Number(m);
  const s = value('--subscribers');
  if (s !== undefined) opts.subscribers = Number(s);
  const w = value('--window');
  if (w !== undefined) opts.window = Number(w);
  const warm = parseWarm(value('--warm'));
  if (warm !== undefined) opts.warm = warm;
  const repeat = parseRepeat(value('--repeat'));
  if (repeat !== undefined) opts.repeat = repeat;
  const only = value('--round');
  if (only !== undefined) {
    if (!ROUND_NAMES.includes(only as RoundName))
      throw new Error(`--round takes ${ROUND_NAMES.join(' or ')}, not ${JSON.stringify(only)}`);
    opts.round = only as RoundName;
  }
  const p = argv.indexOf('--profile');
  if (p >= 0) {
    const dir = argv[p + 1];
    opts.profileDir =
      dir !== undefined && !dir.startsWith('--') ? dir : mkdtempSync(join(tmpdir(), 'quorate-prof-'));
  }
  return opts;
}

/** Receives and accepts `n` deliveries on every receiver. */
function drainAll(receivers: Receiver[], n: number): Promise<void> {
  return Promise.all(receivers.map((r) => receiveAll(r, n))).then(() => undefined);
}

/** One topic with `k` subscribers: deliveries per second. */
async function topicRound(url: URL, name: string, n: number, k: number, window: number, body: Buffer) {
  const pub = await connect({ urls: url.href, reconnect: false });
  const sub = await connect({ urls: url.href, reconnect: false });
  try {
    const receivers: Receiver[] = [];
    for (let i = 0; i < k; i++)
      receivers.push(await sub.openReceiver(name, { topic: true, credit: window, confirmAccept: false }));
    const sender = await pub.openSender(name, { topic: true });
    const t0 = performance.now();
    // together: a failed send is the error reported, the receivers' end is not left unhandled
    await Promise.all([drainAll(receivers, n), sendAll(sender, n, window, body, 't')]);
    return Math.round(((n * k) / (performance.now() - t0)) * 1000);
  } finally {
    await pub.close().catch(() => {});
    await sub.close().catch(() => {});
  }
}

/** The same messages sent to `k` separate queues, one receiver each: deliveries per second. */
async function queuesRound(url: URL, name: string, n: number, k: number, window: number, body: Buffer) {
  const pub = await connect({ urls: url.href, reconnect: false });
  const sub = await connect({ urls: url.href, reconnect: false });
  try {
    const receivers: Receiver[] = [];
    const senders: Sender[] = [];
    for (let i = 0; i < k; i++) {
      receivers.push(await sub.openReceiver(`${name}-${i}`, { credit: window, confirmAccept: false }));
      senders.push(await pub.openSender(`${name}-${i}`));
    }
    const t0 = performance.now();
    // the same total in flight as the topic run, shared by the k senders
    await Promise.all([
      drainAll(receivers, n),
      ...senders.map((s, i) => sendAll(s, n, Math.ceil(window / k), body, `q${i}`)),
    ]);
    return Math.round(((n * k) / (performance.now() - t0)) * 1000);
  } finally {
    await pub.close().catch(() => {});
    await sub.close().catch(() => {});
  }
}

/** The same sends as queuesRound with nobody receiving: the broker's send path alone. */
async function sendsRound(url: URL, name: string, n: number, k: number, window: number, body: Buffer) {
  const pub = await connect({ urls: url.href, reconnect: false });
  try {
    const senders: Sender[] = [];
    for (let i = 0; i < k; i++) senders.push(await pub.openSender(`${name}-${i}`));
    const t0 = performance.now();
    await Promise.all(senders.map((s, i) => sendAll(s, n, Math.ceil(window / k), body, `s${i}`)));
    return Math.round(((n * k) / (performance.now() - t0)) * 1000);
  } finally {
    await pub.close().catch(() => {});
  }
}

/** The broker's CPU per topic delivery: the topic round's per delivery less its publish share. */
function topicDeliveryCpu(
  topicCpu: ReadonlyMap<string, number | null>,
  sendCpu: ReadonlyMap<string, number | null>,
  k: number,
): { us: number | null; perSend: number | null } {
  const t = topicCpu.get('broker');
  const s = sendCpu.get('broker');
  if (t == null || s == null || s <= 0) return { us: null, perSend: null };
  const us = Math.round((t - s / k) * 10) / 10;
  return { us, perSend: Math.round((us / s) * 100) / 100 };
}

export async function run(opts: TopicsOptions = {}): Promise<TopicsResult> {
  const cli = argsFromCommandLine(process.argv.slice(2));
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const n = opts.messages ?? cli.messages ?? 5_000;
  const k = opts.subscribers ?? cli.subscribers ?? 10;
  const window = opts.window ?? cli.window ?? 1000;
  const profileDir = opts.profileDir ?? cli.profileDir;
  const only = opts.round ?? cli.round;
  const runs = (round: RoundName) => only === undefined || only === round;
  if (profileDir !== undefined) {
    mkdirSync(profileDir, { recursive: true });
    log(`CPU profiles into ${profileDir}`);
  }
  const repeat = opts.repeat ?? cli.repeat ?? 1;
  const body = Buffer.alloc(1024, 0x61);
  let broker: RunningBroker | undefined;
  const repeats: TopicsRepeat[] = [];
  try {
    broker = await startOurBroker(
      true,
      profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'broker')],
    );
    const url = broker.url;
    const stamp = Date.now();
    // warm-up (JIT, link and queue paths), by default at a tenth of the size, the rounds in
    // their measured order, twice (WARM_PASSES)
    const warm = opts.warm ?? cli.warm ?? defaultWarm(n);
    const roundOf = { topic: topicRound, queues: queuesRound, sends: sendsRound };
    await warmUpPasses(ROUND_NAMES.filter(runs), async (round, pass) => {
      await roundOf[round](url, `${round}-warm${pass}-${stamp}`, warm, k, window, body);
    });
    const counted = await benchProcesses(broker);
    for (let r = 1; r <= repeat; r++) {
      // the first repeat's names as without --repeat
      const tag = r === 1 ? `${stamp}` : `${stamp}-r${r}`;
      const clientProfile = (name: string) =>
        profileDir === undefined
          ? undefined
          : join(profileDir, `client-${name}${r === 1 ? '' : `-r${r}`}.cpuprofile`);
      let topic = 0;
      let queues = 0;
      let topicCpu = new Map<string, number | null>();
      let queuesCpu = new Map<string, number | null>();
      let sendCpu = new Map<string, number | null>();
      // per delivered message: both rounds deliver n x k
      if (runs('topic'))
        ({ value: topic, cpuUs: topicCpu } = await measureCpu(counted, n * k, () =>
          profiled(clientProfile('topic'), () => topicRound(url, `topic-${tag}`, n, k, window, body)),
        ));
      if (runs('queues'))
        ({ value: queues, cpuUs: queuesCpu } = await measureCpu(counted, n * k, () =>
          profiled(clientProfile('queues'), () => queuesRound(url, `queues-${tag}`, n, k, window, body)),
        ));
      if (runs('sends'))
        ({ cpuUs: sendCpu } = await measureCpu(counted, n * k, () =>
          profiled(clientProfile('sends'), () => sendsRound(url, `sends-${tag}`, n, k, window, body)),
        ));
      const delivery = topicDeliveryCpu(topicCpu, sendCpu, k);
      repeats.push({
        topicDeliveredPerSec: topic,
        queuesDeliveredPerSec: queues,
        ratio: queues > 0 ? Math.round((topic / queues) * 100) / 100 : 0,
        topicCpuUs: Object.fromEntries(topicCpu),
        queuesCpuUs: Object.fromEntries(queuesCpu),
        sendCpuUs: Object.fromEntries(sendCpu),
        topicDeliveryBrokerUs: delivery.us,
        topicDeliveryPerSend: delivery.perSend,
      });
    }
  } finally {
    await broker?.stop().catch(() => undefined);
  }
  repeats.forEach((rep, i) => {
    if (repeat > 1) log(`repeat ${i + 1} of ${repeat}:`);
    logRepeat(log, rep, n, k, window);
  });
  const over = <T>(pick: (rep: TopicsRepeat) => T) => repeats.map(pick);
  const rates = {
    topic: spread(over((rep) => rep.topicDeliveredPerSec)),
    queues: spread(over((rep) => rep.queuesDeliveredPerSec)),
    ratio: spread(over((rep) => rep.ratio)),
    us: spread(over((rep) => rep.topicDeliveryBrokerUs)),
    perSend: spread(over((rep) => rep.topicDeliveryPerSend)),
  };
  if (repeat > 1) {
    log(`ratio topic / queues over ${repeat} repeats: median ${formatSpread(rates.ratio, 2)} (target >= 5)`);
    log(
      `broker CPU per topic delivery over ${repeat} repeats: median ${formatSpread(rates.us, 1)} us = median ${formatSpread(rates.perSend, 2)} x a send's (target <= 0.33)`,
    );
  }
  const first = repeats[0]!;
  // medians of two repeats are means: rounded as one repeat's figure is
  const round = (s: { median: number } | null, digits: number) =>
    s === null ? null : Math.round(s.median * 10 ** digits) / 10 ** digits;
  return {
    messages: n,
    subscribers: k,
    window,
    repeats,
    topicDeliveredPerSec: round(rates.topic, 0) ?? 0,
    queuesDeliveredPerSec: round(rates.queues, 0) ?? 0,
    ratio: round(rates.ratio, 2) ?? 0,
    topicCpuUs: first.topicCpuUs,
    queuesCpuUs: first.queuesCpuUs,
    sendCpuUs: first.sendCpuUs,
    topicDeliveryBrokerUs: round(rates.us, 1),
    topicDeliveryPerSend: round(rates.perSend, 2),
    ...(profileDir !== undefined ? { profileDir } : {}),
  };
}

/** One repeat's lines, as a run printed them before `--repeat`. */
function logRepeat(log: (line: string) => void, rep: TopicsRepeat, n: number, k: number, window: number) {
  const cpu = (us: Record<string, number | null>) => formatCpuPerMessage(new Map(Object.entries(us)));
  log(`${n} x 1 KiB to ${k} subscribers, window ${window}, single node, durable store`);
  log(`topic (1 publish per message):        ${rep.topicDeliveredPerSec} msg/s delivered`);
  log(`${k} queues (${k} sends per message):    ${rep.queuesDeliveredPerSec} msg/s delivered`);
  log(`ratio topic / queues: ${rep.ratio}x (target >= 5)`);
  log(`CPU per delivered message, topic:  ${cpu(rep.topicCpuUs)}`);
  log(`CPU per delivered message, queues: ${cpu(rep.queuesCpuUs)}`);
  log(`CPU per send, nobody receiving:    ${cpu(rep.sendCpuUs)}`);
  log(
    `broker CPU per topic delivery: ${rep.topicDeliveryBrokerUs ?? '-'} us = ${rep.topicDeliveryPerSend ?? '-'} x a send's (target <= 0.33)`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
