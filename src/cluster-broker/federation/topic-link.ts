/**
 * A topic link (docs/federation.md#topics): a durable subscription on upstream topic T
 * republishing every message to local topic T (link.ts runs it).
 *
 * - The subscription is named by the link's container-id (link.ts: our cluster id, the upstream,
 *   T) and link name `federation/<cluster-id>/T`: the same whichever member runs the link and
 *   across restarts, so a takeover or a restart resumes it, with everything published meanwhile.
 * - Not demand-driven: everything is copied, within a bounded credit window.
 * - A message is committed here by one publish to T, with its message-id as dedup key: it reaches
 *   every local subscription once, and a re-sent move is absorbed as a duplicate.
 * - Loops (route.ts): a message whose route forbids the move is accepted without being copied:
 *   the subscription is this link's alone, so left there it would only pile up.
 */
import { FederationLink, type LinkKind, type LinkOptions } from './link.js';

/** Upstream credit plus deliveries not yet settled upstream, at most (the copy is not on demand). */
export const TOPIC_CREDIT_WINDOW = 100;

/** The link republishing upstream topic `topic` to ours. */
export function topicLink(o: LinkOptions, topic: string): FederationLink {
  const { local } = o;
  const kind: LinkKind = {
    kind: 'topic',
    address: topic,
    outstandingUntil: 'settled',
    open: (conn, signal) =>
      conn.openReceiver(topic, {
        topic: true,
        durable: true,
        subscription: `federation/${local.clusterId}/${topic}`,
        credit: 0,
        confirmAccept: true,
        signal,
      }),
    creditToGrant: (outstanding) => Math.max(0, TOPIC_CREDIT_WINDOW - outstanding),
    commit: (copy) => local.publish(topic, copy),
    leave: (d) => d.accept(),
  };
  return new FederationLink(o, kind);
}
