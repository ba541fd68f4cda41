/**
 * The chaos runner's topic workload (`--federation --topic`): besides the queues, every producer
 * publishes to one topic on east (`CHAOS_TOPIC`), which west federates
 * (docs/federation.md#topics). One durable subscription on each cluster, west's fed through the
 * link's durable subscription on east, must get every acknowledged publish exactly once: each is
 * judged as a queue of its own whose expected set is every publish (`checkSubscriptions`).
 *
 * "Every publish" is well defined because nothing is published before every subscription
 * exists: the link's on east before the clusters are handed over (federation.ts), ours once
 * `subscribeTopic` resolves (a subscription exists once its attach is answered, docs/topics.md).
 */
import type { Connection } from '../../src/index.js';
import { checkSubscriptions, type TotalQueueResult } from './checker.js';
import { History } from './history.js';
import type { Side } from './sides.js';
import type { ChaosTarget } from './target.js';
import { type ConsumerInfo, type ProducerStats, runConsumer, runProducer, watchReceiver } from './workers.js';

/** The topic of a `--topic` run (west federates it from east). */
export const CHAOS_TOPIC = 'prices';

/** One subscription's verdict. */
export interface SubscriptionResult {
  /** its process in the topic history: `<cluster>-s` */
  name: string;
  cluster: string;
  /** hand-outs to the application, surplus ones included */
  received: number;
  result: TotalQueueResult;
}

/** What the run summary says about the topic. */
export interface TopicSummary {
  topic: string;
  publish: { invoked: number; ok: number; fail: number; info: number };
  /**
   * each subscription's counts (the lists are in the report's `subscriptions`); `surplus`:
   * hand-outs beyond one per publish, at-least-once (after an accept in doubt) unless counted
   * in `duplicated-count`
   */
  subscriptions: ({ name: string; cluster: string; received: number; surplus: number } & Omit<
    TotalQueueResult,
    'details'
  >)[];
}

interface Subscription {
  name: string;
  cluster: string;
  /** values handed out (drain progress) */
  seen: Set<string>;
  close(): Promise<void>;
  info(): ConsumerInfo;
  done: Promise<number>;
}

export interface TopicPublishOptions {
  /** the producers' connections: each also publishes to the topic */
  conns: readonly Connection[];
  rate: number;
  window: number;
  sendTimeoutMs: number;
  shouldStop: () => boolean;
}

export class TopicWorkload {
  /** every acknowledged publish */
  readonly acknowledged = new Set<string>();

  constructor(
    /** publishes and every subscription's hand-outs */
    readonly history: History,
    private readonly subs: readonly Subscription[],
  ) {}

  /** Each producer connection publishes unique values (`p<i>-topic-<n>`) to the topic. */
  publish({ conns, ...pace }: TopicPublishOptions): Promise<ProducerStats>[] {
    return conns.map((conn, i) =>
      runProducer({
        process: `p${i}-topic`,
        conn,
        addresses: [CHAOS_TOPIC],
        topic: true,
        history: this.history,
        ...pace,
        acknowledged: this.acknowledged,
      }),
    );
  }

  /** Has every subscription received every acknowledged publish (the drain's condition)? */
  allReceived(): boolean {
    return this.subs.every((s) => [...this.acknowledged].every((v) => s.seen.has(v)));
  }

  consumers(): ConsumerInfo[] {
    return this.subs.map((s) => s.info());
  }

  /**
   * Detaches the subscribers and waits for their last accepts. The durable subscriptions stay
   * (close() does not end them): the clusters are stopped next anyway.
   */
  async close(): Promise<void> {
    for (const s of this.subs) await s.close();
    await Promise.all(this.subs.map((s) => s.done));
  }

  /** Every subscription's check, and the summary's part. */
  check(): { subscriptions: SubscriptionResult[]; summary: TopicSummary } {
    const results = checkSubscriptions(
      this.history.ops,
      this.subs.map((s) => s.name),
    );
    const h = this.history;
    const subscriptions = this.subs.map((s) => ({
      name: s.name,
      cluster: s.cluster,
      received: h.ops.filter((op) => op.f === 'dequeue' && op.process === s.name).length,
      result: results.get(s.name)!,
    }));
    return {
      subscriptions,
      summary: {
        topic: CHAOS_TOPIC,
        publish: {
          invoked: h.count('invoke', 'enqueue'),
          ok: h.count('ok', 'enqueue'),
          fail: h.count('fail', 'enqueue'),
          info: h.count('info', 'enqueue'),
        },
        subscriptions: subscriptions.map(({ result: { details, ...counts }, ...s }) => ({
          ...s,
          surplus: details.rawDuplicatedCount,
          ...counts,
        })),
      },
    };
  }
}

/**
 * One durable subscription to the topic on each side (process `<side>-s`, its own connection
 * with a fixed container-id, so a failover finds the subscription again); resolves once every
 * attach is answered, i.e. once every subscription exists.
 */
export async function subscribeTopic(o: {
  sides: readonly Side[];
  seed: number;
  /** the run's history: the topic's shares its clock (and so the nemesis log's) */
  clock: History;
  connect: (containerId: string, on: ChaosTarget) => Promise<Connection>;
  /** every hand-out (drain progress) */
  onMessage: () => void;
  log: (line: string) => void;
}): Promise<TopicWorkload> {
  const history = new History(o.clock.t0);
  const subs: Subscription[] = [];
  for (const side of o.sides) {
    const name = `${side.name}-s`;
    const conn = await o.connect(`chaos-${o.seed}-${name}`, side.target);
    // no receiver dedup, as the queue consumers in federation mode: what a broker hands out
    // twice reaches the checker
    const receiver = await conn.openReceiver(CHAOS_TOPIC, {
      topic: true,
      durable: true,
      subscription: 'chaos',
      credit: 50,
      timeoutMs: 120_000,
      dedup: false,
    });
    const seen = new Set<string>();
    subs.push({
      name,
      cluster: side.name,
      seen,
      close: () => receiver.close({ timeoutMs: 5_000 }).catch(() => undefined),
      info: watchReceiver(name, conn, receiver, o.log),
      done: runConsumer({ process: name, receiver, history, seen, onMessage: o.onMessage }),
    });
  }
  return new TopicWorkload(history, subs);
}
