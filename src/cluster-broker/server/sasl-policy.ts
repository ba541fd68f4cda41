/**
 * The server's SASL policy for one connection: which mechanisms it offers and how it answers a
 * sasl-init. PLAIN is checked against the users file (never offered over a plain socket when TLS
 * is required for it); ANONYMOUS when allowed; everything else refused. A failure is logged at
 * warn with the user and the source address and answered after the address's throttle delay.
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

function verdict(
  p: SaslPolicy,
  peer: PeerInfo,
  mechanism: string,
  user: string,
  password: string,
): Promise<string | undefined> | string | undefined {
  if (mechanism === 'ANONYMOUS') return p.anonymous ? undefined : 'ANONYMOUS is not allowed';
  if (mechanism !== 'PLAIN') return `mechanism ${mechanism} is not offered`;
  if (!p.checker) return 'PLAIN is not offered (no users file)';
  if (p.requireTlsForPlain && !peer.tls) return 'PLAIN over a plain socket is refused (TLS required)';
  return p.checker.check(user, password).then((ok) => (ok ? undefined : 'wrong user name or password'));
}

/** The authenticator for one connection from `peer`. */
export function makeAuthenticator(p: SaslPolicy, peer: PeerInfo): SaslAuthenticator {
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
    const v = verdict(p, peer, mechanism, user, identity.password ?? '');
    if (v === undefined) return true;
    if (typeof v === 'string') return fail(mechanism, user, v);
    return v.then((reason) => (reason === undefined ? true : fail(mechanism, user, reason)));
  };
}

export function saslServerOptions(p: SaslPolicy, peer: PeerInfo): SaslServerOptions {
  return { mechanisms: saslMechanisms(p, peer), authenticate: makeAuthenticator(p, peer) };
}
