/**
 * The demand rule of queue federation (docs/federation.md#demand): messages move from upstream
 * queue Q to local queue Q only while local consumers of Q have unused credit beyond what Q
 * already holds for them. The link keeps the upstream credit it has outstanding (granted, plus
 * received and not yet enqueued here) at that gap, never more: work flows to the cluster whose
 * consumers are idle, and what no one here asks for stays upstream for others.
 */

/** What the rule reads. */
export interface DemandInputs {
  /** Unused link credit of the local consumers of Q (what they could take now). */
  consumerCredit: number;
  /** Messages of local Q that a consumer could take now. */
  available: number;
  /** Upstream credit granted and not used yet. */
  upstreamCredit: number;
  /** Messages received from upstream and not yet enqueued here (or given back). */
  moving: number;
}

/** How much more upstream credit to grant now (0: none). */
export function creditToGrant(d: DemandInputs): number {
  const gap = d.consumerCredit - d.available;
  const outstanding = d.upstreamCredit + d.moving;
  return Math.max(0, gap - outstanding);
}
