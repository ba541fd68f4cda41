/**
 * The server's SASL policy for one connection: which mechanisms it offers and how it answers a
 * sasl-init. PLAIN is checked against the users file (never offered over a plain socket when TLS
 * is required for it); ANONYMOUS when allowed; everything else refused. A failure is logged at
 * warn with the user and the source address and answered after the address's throttle delay.
 * A check whose client has gone while it waited is dropped unanswered; one refused because too
 * many wait (users.ts) counts as a failure (docs/security.md#authentication).
 */
import type { SaslAuthenticator, SaslServerOptions } from '../../protocol/index.js';
import type { AuthThrottle } from './auth-throttle.js';
import type { BrokerLogger } from './options.js';
import type { PasswordChecker } from './users.js';

export interface SaslPolicy {
  /** Absent: PLAIN is not offered. */
  checker: PasswordChecker | undefined;
  anonymous: boolean;
  requireTlsForPlain: boolean;
  throttle: AuthThrottle;
  logger: BrokerLogger;
}

/** The transport a connection arrived on. */
export interface PeerInfo {
  /** Source IP address ('' when unknown, e.g. in process). */
  address: string;
  /** True on a TLS socket. */
  tls: boolean;
}

/** Mechanisms to offer this peer, in order of preference. */
export function saslMechanisms(p: SaslPolicy, peer: PeerInfo): string[] {
  const m: string[] = [];
  if (p.checker && (peer.tls || !p.requireTlsForPlain)) m.push('PLAIN');
  if (p.anonymous) m.push('ANONYMOUS');
  return m;
}

/** Why a check was dropped: its connection ended while it waited. */
const GONE = Symbol('client gone');

function verdict(
  p: SaslPolicy,
  peer: PeerInfo,
  mechanism: string,
  user: string,
  password: string,
  gone: AbortSignal | undefined,
): Promise<string | typeof GONE | undefined> | string | undefined {
  if (mechanism === 'ANONYMOUS') return p.anonymous ? undefined : 'ANONYMOUS is not allowed';
  if (mechanism !== 'PLAIN') return `mechanism ${mechanism} is not offered`;
  if (!p.checker) return 'PLAIN is not offered (no users file)';
  if (p.requireTlsForPlain && !peer.tls) return 'PLAIN over a plain socket is refused (TLS required)';
  const who = gone === undefined ? { address: peer.address } : { address: peer.address, gone };
  return p.checker.verify(user, password, who).then((v) => {
    if (v === 'ok') return undefined;
    if (v === 'gone') return GONE;
    return v === 'busy' ? 'too many logins waiting for a check' : 'wrong user name or password';
  });
}

/** The authenticator for one connection from `peer`; `gone` aborts when the connection ends. */
export function makeAuthenticator(p: SaslPolicy, peer: PeerInfo, gone?: AbortSignal): SaslAuthenticator {
  const fail = (mechanism: string, user: string, reason: string): Promise<boolean> => {
    const delayMs = p.throttle.failure(peer.address, Date.now());
    p.logger.warn?.(
      { user, address: peer.address, mechanism, reason, delayMs },
      'SASL authentication failed',
    );
    return new Promise((resolve) => setTimeout(() => resolve(false), delayMs).unref());
  };
  return (mechanism, identity) => {
    const user = identity.username ?? '';
    const v = verdict(p, peer, mechanism, user, identity.password ?? '', gone);
    if (v === undefined) return true;
    if (typeof v === 'string') return fail(mechanism, user, v);
    return v.then((reason) => {
      if (reason === undefined) return true;
      // nobody is left to answer, and nothing was checked: no failure to count
      if (reason === GONE) return false;
      return fail(mechanism, user, reason);
    });
  };
}

export function saslServerOptions(p: SaslPolicy, peer: PeerInfo, gone?: AbortSignal): SaslServerOptions {
  return { mechanisms: saslMechanisms(p, peer), authenticate: makeAuthenticator(p, peer, gone) };
}
