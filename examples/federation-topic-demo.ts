/**
 * The federation demo's topic mode (`npm run demo -- --federation --topic`): two local 3-member
 * clusters, `east` (upstream) and `west`, which federates east's topic (docs/federation.md#topics):
 * its link holds a durable subscription on east's topic and republishes every message to west's
 * topic of the same name. The producer publishes to east only; a durable subscription on each
 * cluster must get every acknowledged publish exactly once: a topic copies every message to
 * every subscription, where a queue splits them. Both subscriptions exist, and a west member runs
 * the link, before the first publish (a subscription gets what is published after its attach
 * is answered, docs/topics.md#subscriptions). Every few seconds a member is `kill -9`ed, sides
 * alternating: on east the member the producer uses, on west the member running the link (the
 * supervisor restarts it). It ends with a table per cluster's subscription and for the whole,
 * and exits non-zero on any loss or duplicate on either side.
 *
 * A message handed out again after its accept was in doubt (the member died before confirming
 * it) is at-least-once, not a duplicate, and counted apart, per subscription. The subscribers
 * turn the client's own duplicate suppression off (docs/delivery-contract.md#receiver-dedup), as
 * the chaos runner's do: the demo counts what the brokers hand out, so a publish the link
 * republished twice would show as a duplicate rather than be dropped by the client.
 */
import {
  type FederationDemoOptions,
  type Ledger,
  newLedger,
  type ProducerTally,
  printSummary,
  runFederationMode,
  type Side,
  type SideName,
  total,
} from './demo-federation.js';

const TOPIC = 'demo-prices';
/** Each cluster's durable subscription: the link name under its connection's fixed container-id. */
const SUBSCRIPTION = 'demo';

export function runFederationTopicDemo(o: FederationDemoOptions): Promise<number> {
  // one ledger per subscription: each must get every message once
  const ledgers = new Map<SideName, Ledger>();
  return runFederationMode(o, {
    address: TOPIC,
    what: `topic ${TOPIC}`,
    containerIdPrefix: 'federation-topic-demo',
    federate: { topics: [TOPIC] },
    senderOptions: { topic: true },
    openConsumers: (pair) =>
      Promise.all(
        pair.sides.map(async (side) => {
          const ledger = newLedger();
          ledgers.set(side.name, ledger);
          // a fixed container-id (`open` gives one per role): a failover finds the subscription again
          const conn = await pair.open(side, `${side.name}-subscriber`);
          const receiver = await conn.openReceiver(TOPIC, {
            topic: true,
            durable: true,
            subscription: SUBSCRIPTION,
            credit: 100,
            dedup: false,
          });
          return { side, ledger, receiver };
        }),
      ),
    receivedNow: (sides) => Object.fromEntries(sides.map((s) => [s.name, s.received.size])),
    missing: (tally, sides) => missingSomewhere(tally, sides).size,
    summarize: (tally, sides) => summarize(tally, sides, ledgers),
  });
}

/** Acknowledged ids some subscription has not received. */
function missingSomewhere(tally: ProducerTally, sides: Side[]): Set<string> {
  const missing = new Set<string>();
  for (const id of tally.acknowledged) if (sides.some((s) => !s.received.has(id))) missing.add(id);
  return missing;
}

function summarize(tally: ProducerTally, sides: Side[], ledgers: Map<SideName, Ledger>): number {
  const acked = tally.acknowledged.size;
  const lostOn = (s: Side): number => [...tally.acknowledged].filter((id) => !s.received.has(id)).length;
  // every subscription must receive every acknowledged publish: each row's expectation is the same
  const rows: (number | string)[][] = sides.map((s) => [
    s.name,
    tally.attempted,
    acked,
    s.received.size,
    lostOn(s),
    s.duplicates,
    s.kills,
    s.failovers,
  ]);
  const lost = missingSomewhere(tally, sides).size;
  const duplicates = total(sides, 'duplicates');
  const onBoth = [...sides[0]!.received].filter((id) => sides.every((s) => s.received.has(id))).length;
  rows.push([
    'whole',
    tally.attempted,
    acked,
    onBoth,
    lost,
    duplicates,
    total(sides, 'kills'),
    total(sides, 'failovers'),
  ]);
  const inDoubt = sides.map((s) => `${s.name} ${ledgers.get(s.name)?.redeliveredInDoubt ?? 0}`).join(', ');
  return printSummary({
    header: ['subscription', 'published', 'acked', 'received', 'lost', 'duplicates', 'kills', 'failovers'],
    rows,
    notes: [
      `east, west: that cluster's durable subscription '${SUBSCRIPTION}', which must receive every acknowledged publish`,
      'whole: received on both subscriptions; lost on either',
      `handed out again after an accept in doubt (at-least-once, not duplicates): ${inDoubt}`,
    ],
    ok: lost === 0 && duplicates === 0 && acked > 0,
    okText: 'every acknowledged publish received exactly once on each cluster.',
  });
}
