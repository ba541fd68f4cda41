/**
 * The federation demo (`npm run demo -- --federation`): two local 3-member clusters, `east`
 * (upstream) and `west` (downstream: it federates east's queue, docs/federation.md). Producers
 * send to east only; one consumer takes from east and one from west, which gets its messages
 * through the demand-driven federation link (`--consumers-on downstream`: west's only, so every
 * message crosses the link). Every few seconds a member is `kill -9`ed, sides
 * alternating: on east the member the producer uses, on west the member running the link (the
 * supervisor restarts it). It ends with the same table per cluster and for the whole: every
 * acknowledged message must have been received exactly once across both clusters, else it exits
 * non-zero. What it shares with the topic mode (federation-topic-demo.ts) is in
 * demo-federation.ts.
 *
 * A message handed out again after its accept was in doubt (the member died before confirming
 * it) is at-least-once, not a duplicate, and counted apart; one handed out again after an accept
 * the broker confirmed is a duplicate. With consumers on both clusters, faults do duplicate
 * messages: one the link had committed on west but not yet accepted on east when a member died
 * is handed by east to its own consumer as well (test/chaos/README.md#federation).
 */
import {
  type FederationDemoOptions,
  newLedger,
  printSummary,
  runFederationMode,
  type Side,
  total,
} from './demo-federation.js';

const QUEUE = 'demo-orders';

export function runFederationDemo(
  o: FederationDemoOptions & {
    /** consumers on both clusters (the default), or on west only: every message crosses the link */
    consumersOn: 'both' | 'downstream';
  },
): Promise<number> {
  // one ledger for both clusters: a queue splits, each message is consumed on one side only
  const ledger = newLedger();
  return runFederationMode(o, {
    address: QUEUE,
    what: QUEUE,
    containerIdPrefix: 'federation-demo',
    federate: { queues: [QUEUE] },
    openConsumers: (pair) =>
      Promise.all(
        pair.sides
          .filter((s) => o.consumersOn === 'both' || s.name === 'west')
          .map(async (side) => {
            const conn = await pair.open(side, `${side.name}-consumer`);
            return { side, ledger, receiver: await conn.openReceiver(QUEUE, { credit: 100 }) };
          }),
      ),
    receivedNow: (sides) => union(sides).size,
    missing,
    summarize: (tally, sides) => {
      const lost = missing(tally, sides);
      const duplicates = total(sides, 'duplicates');
      // the producers send to east only: what east acknowledged must arrive on one side or the other
      const rows: (number | string)[][] = sides.map((s) => {
        const east = s.name === 'east';
        const sent = east ? [tally.attempted, tally.acknowledged.size] : [0, 0];
        return [s.name, ...sent, s.received.size, east ? lost : 0, s.duplicates, s.kills, s.failovers];
      });
      rows.push([
        'whole',
        tally.attempted,
        tally.acknowledged.size,
        union(sides).size,
        lost,
        duplicates,
        total(sides, 'kills'),
        total(sides, 'failovers'),
      ]);
      return printSummary({
        header: ['cluster', 'sent', 'acked', 'received', 'lost', 'duplicates', 'kills', 'failovers'],
        rows,
        notes: [
          `duplicates whose first confirmed accept was on the other cluster: ${ledger.crossDuplicates}`,
          `handed out again after an accept in doubt (at-least-once, not duplicates): ${ledger.redeliveredInDoubt}`,
        ],
        ok: lost === 0 && duplicates === 0 && tally.acknowledged.size > 0,
        okText: 'every acknowledged message received exactly once across both clusters.',
      });
    },
  });
}

function union(sides: Side[]): Set<string> {
  const all = new Set<string>();
  for (const s of sides) for (const id of s.received) all.add(id);
  return all;
}

/** Acknowledged ids received on neither side. */
function missing(tally: { acknowledged: Set<string> }, sides: Side[]): number {
  let n = 0;
  for (const id of tally.acknowledged) if (!sides.some((s) => s.received.has(id))) n++;
  return n;
}
