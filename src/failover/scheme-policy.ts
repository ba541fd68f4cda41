/**
 * The one rule for which scheme a member the client learned (a member list, a redirect) may be
 * dialled with: never a weaker security class than the endpoint it was learned through, so the
 * credentials and messages the client started protecting with TLS are never sent in clear
 * (docs/security.md#client-credentials-and-learned-members). NATS refuses the same downgrade.
 *
 * A new scheme (e.g. ws / wss) gets its class here; nothing else decides.
 */
import type { AmqpScheme } from '../wire-extensions.js';

/** How a scheme protects what crosses the wire: `plain` (readable by anyone on the path) or `tls`. */
export type SecurityClass = 'plain' | 'tls';

const SECURITY_CLASS: Readonly<Record<AmqpScheme, SecurityClass>> = { amqp: 'plain', amqps: 'tls' };
const STRENGTH: Readonly<Record<SecurityClass, number>> = { plain: 0, tls: 1 };

/** The security class of a scheme. */
export function securityClass(scheme: AmqpScheme): SecurityClass {
  return SECURITY_CLASS[scheme];
}

/**
 * May a member advertised as `learned` be dialled by a client that reached the advertiser with
 * `from`? Yes for the same class or a stronger one; no for a downgrade (amqps -> amqp).
 */
export function mayFollowScheme(from: AmqpScheme, learned: AmqpScheme): boolean {
  return STRENGTH[securityClass(learned)] >= STRENGTH[securityClass(from)];
}

/** The strongest of `schemes` (the baseline when nothing says which endpoint a list came from). */
export function strongestScheme(schemes: readonly AmqpScheme[]): AmqpScheme | undefined {
  let best: AmqpScheme | undefined;
  for (const s of schemes) if (best === undefined || !mayFollowScheme(s, best)) best = s;
  return best;
}
