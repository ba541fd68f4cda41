/**
 * A queue link (docs/federation.md): upstream queue Q -> local queue Q (link.ts runs it).
 *
 * - Demand (demand.ts): upstream credit is granted only for the gap between the local consumers'
 *   unused credit and what local Q already holds for them.
 * - A message is committed here by an enqueue into Q, with its message-id as dedup key.
 * - Loops (route.ts): a message whose route forbids the move is settled `modified` with
 *   undeliverable-here: it stays upstream for other consumers, never offered to this link again.
 */
import { creditToGrant } from './demand.js';
import { FederationLink, type LinkKind, type LinkOptions } from './link.js';

/** The link moving upstream queue `queue` into ours. */
export function queueLink(o: LinkOptions, queue: string): FederationLink {
  const { local } = o;
  const kind: LinkKind = {
    kind: 'queue',
    address: queue,
    outstandingUntil: 'committed',
    open: (conn, signal) =>
      conn.openReceiver(queue, {
        name: `federation/${local.clusterId}/${queue}`,
        credit: 0,
        confirmAccept: true,
        // a move in flight when either side dies comes back to this link (any member running
        // it), not to the upstream's own consumers: it is committed here already
        holdUnsettled: true,
        signal,
      }),
    watchDemand: (listener) => local.watchDemand(queue, listener),
    creditToGrant: (outstanding) =>
      creditToGrant({
        consumerCredit: local.unusedConsumerCredit(queue),
        available: local.available(queue),
        upstreamCredit: outstanding,
        moving: 0,
      }),
    commit: (copy) => local.enqueue(queue, copy),
    leave: (d) => d.modify({ undeliverableHere: true }),
  };
  return new FederationLink(o, kind);
}
