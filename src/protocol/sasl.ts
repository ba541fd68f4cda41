/**
 * SASL ANONYMOUS and PLAIN (RFC 4616) helpers for both roles. The handshake state lives in the
 * connection; these are the pure parts.
 */
import type { SaslInit } from './codec-port.js';
import type { SaslClientOptions, SaslIdentity } from './types.js';

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

/** SASL outcome codes (part 5, 5.3.3.6). */
export const SaslCode = { ok: 0, auth: 1, sys: 2, sysPerm: 3, sysTemp: 4 } as const;

/** The sasl-init a client sends for its configured mechanism. */
export function saslInitFor(opts: SaslClientOptions, hostname?: string): SaslInit {
  const init: SaslInit = { mechanism: opts.mechanism };
  if (opts.mechanism === 'PLAIN') {
    init.initialResponse = utf8.encode(`${opts.authzid ?? ''}\u0000${opts.username}\u0000${opts.password}`);
  } else if (opts.trace) {
    init.initialResponse = utf8.encode(opts.trace);
  }
  if (hostname) init.hostname = hostname;
  return init;
}

/** Server side: the identity in a sasl-init, or undefined when malformed. */
export function identityFrom(init: SaslInit): SaslIdentity | undefined {
  const r = init.initialResponse;
  if (init.mechanism === 'ANONYMOUS') return r && r.length > 0 ? { trace: utf8d.decode(r) } : {};
  if (init.mechanism !== 'PLAIN') return {};
  if (!r) return undefined;
  const a = r.indexOf(0);
  const b = a < 0 ? -1 : r.indexOf(0, a + 1);
  if (a < 0 || b < 0) return undefined;
  const id: SaslIdentity = {
    username: utf8d.decode(r.subarray(a + 1, b)),
    password: utf8d.decode(r.subarray(b + 1)),
  };
  if (a > 0) id.authzid = utf8d.decode(r.subarray(0, a));
  return id;
}

/** Default server policy: admit ANONYMOUS, refuse the rest. */
export function defaultAuthenticator(mechanism: string): boolean {
  return mechanism === 'ANONYMOUS';
}
