/**
 * The one rule for which scheme a member the client learned (a member list, a redirect) may be
 * dialled with:
 *
 * - never a weaker security class than the endpoint it was learned through, so the credentials
 *   and messages the client started protecting with TLS are never sent in clear
 *   (docs/security.md#client-credentials-and-learned-members). NATS refuses the same downgrade;
 * - never another transport: a client that reached the cluster over WebSocket (ws, wss) learns
 *   the members' WebSocket endpoints only, one that came over TCP (amqp, amqps) their TCP ones.
 *   Where only port 443 or a browser's WebSocket gets through, a TCP address is of no use, and
 *   an application that chose TCP did not ask for an HTTP hop (docs/websocket.md#client).
 *
 * A new scheme gets its class and transport here; nothing else decides.
 */
import type { AmqpScheme, MemberInfo, TcpScheme } from '../wire-extensions.js';

/** How a scheme protects what crosses the wire: `plain` (readable by anyone on the path) or `tls`. */
export type SecurityClass = 'plain' | 'tls';
/** What a scheme runs AMQP over. */
type SchemeTransport = 'tcp' | 'websocket';

const SECURITY_CLASS: Readonly<Record<AmqpScheme, SecurityClass>> = {
  amqp: 'plain',
  amqps: 'tls',
  ws: 'plain',
  wss: 'tls',
};
const TRANSPORT: Readonly<Record<AmqpScheme, SchemeTransport>> = {
  amqp: 'tcp',
  amqps: 'tcp',
  ws: 'websocket',
  wss: 'websocket',
};
const STRENGTH: Readonly<Record<SecurityClass, number>> = { plain: 0, tls: 1 };

/** The security class of a scheme. */
export function securityClass(scheme: AmqpScheme): SecurityClass {
  return SECURITY_CLASS[scheme];
}

/** Why a learned member is not taken, or `ok`. */
export type FollowVerdict = 'ok' | 'weaker-scheme' | 'other-transport';

/** May a member advertised as `learned` be dialled by a client that reached the advertiser with `from`? */
export function followVerdict(from: AmqpScheme, learned: AmqpScheme): FollowVerdict {
  if (TRANSPORT[learned] !== TRANSPORT[from]) return 'other-transport';
  return STRENGTH[securityClass(learned)] >= STRENGTH[securityClass(from)] ? 'ok' : 'weaker-scheme';
}

/**
 * May a member advertised as `learned` be dialled by a client that reached the advertiser with
 * `from`? Yes for the same transport and the same security class or a stronger one; no for a
 * downgrade (amqps -> amqp) or another transport (ws -> amqp).
 */
export function mayFollowScheme(from: AmqpScheme, learned: AmqpScheme): boolean {
  return followVerdict(from, learned) === 'ok';
}

/** The strongest of `schemes` (the baseline when nothing says which endpoint a list came from). */
export function strongestScheme(schemes: readonly AmqpScheme[]): AmqpScheme | undefined {
  let best: AmqpScheme | undefined;
  for (const s of schemes)
    if (best === undefined || STRENGTH[securityClass(s)] > STRENGTH[securityClass(best)]) best = s;
  return best;
}

/**
 * The endpoint of a listed member a client that came with `from` would dial: over WebSocket, the
 * member's `quorate:ws-url` (a member without one keeps its TCP scheme, which the policy then
 * refuses as another transport); over TCP, the member as listed.
 */
export function endpointFor(from: AmqpScheme, member: MemberInfo): MemberInfo {
  if (TRANSPORT[from] !== 'websocket') return member;
  const { webSocket, ...rest } = member;
  if (webSocket === undefined) {
    const tcp: TcpScheme = from === 'wss' ? 'amqps' : 'amqp';
    return { ...rest, scheme: member.scheme ?? tcp };
  }
  const out: MemberInfo = { ...rest, scheme: webSocket.scheme, host: webSocket.host };
  if (webSocket.port !== undefined) out.port = webSocket.port;
  else delete out.port;
  return out;
}
