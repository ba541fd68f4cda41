/**
 * What keeps strangers on the monitoring port from hurting the broker (docs/security.md#http-port):
 * a cap on open connections (the descriptors stay with AMQP and the store), deadlines on a
 * request's headers, on the whole request and on an idle socket, and the `Host` check that stops
 * DNS rebinding (a browser page of a name the attacker controls reading our API).
 */
import { isIP } from 'node:net';
import { MonitoringError } from './errors.js';

/** Limits of the monitoring HTTP server; every field is optional. */
export interface HttpLimits {
  /** Connections open at once at most; more are closed as soon as they are accepted. Default 64. */
  maxConnections?: number;
  /** A request's headers must arrive within this. Default 10_000 ms. */
  headersTimeoutMs?: number;
  /** A whole request must arrive within this; at least `headersTimeoutMs`. Default 30_000 ms (or `headersTimeoutMs` when that is longer). */
  requestTimeoutMs?: number;
  /** A socket with no traffic is closed after this. Default 30_000 ms. */
  idleTimeoutMs?: number;
}

export const DEFAULT_HTTP_LIMITS: Required<HttpLimits> = {
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
};

/**
 * The limits to apply: defaults filled in, every value checked (`MonitoringError`,
 * 'amqp:invalid-field', rather than node's own RangeError from inside `createServer`). Node
 * refuses a header deadline longer than the request deadline, so an unset request deadline
 * follows a longer header deadline.
 */
export function resolveHttpLimits(given: HttpLimits = {}): Required<HttpLimits> {
  for (const [name, v] of Object.entries(given)) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1)) {
      throw new MonitoringError(`httpLimits.${name} must be a positive integer, got ${String(v)}`, {
        condition: 'amqp:invalid-field',
      });
    }
  }
  const headersTimeoutMs = given.headersTimeoutMs ?? DEFAULT_HTTP_LIMITS.headersTimeoutMs;
  const requestTimeoutMs =
    given.requestTimeoutMs ?? Math.max(DEFAULT_HTTP_LIMITS.requestTimeoutMs, headersTimeoutMs);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new MonitoringError(
      `httpLimits.requestTimeoutMs (${requestTimeoutMs}) must be at least headersTimeoutMs (${headersTimeoutMs})`,
      { condition: 'amqp:invalid-field' },
    );
  }
  return {
    maxConnections: given.maxConnections ?? DEFAULT_HTTP_LIMITS.maxConnections,
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: given.idleTimeoutMs ?? DEFAULT_HTTP_LIMITS.idleTimeoutMs,
  };
}

/** The host part of a `Host` header (`name:port`, `[v6]:port`), lower case; undefined when malformed. */
export function hostOfHeader(header: string): string | undefined {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? undefined : h.slice(1, end);
  }
  const colon = h.indexOf(':');
  const name = colon < 0 ? h : h.slice(0, colon);
  return name === '' ? undefined : name.replace(/\.$/, '');
}

/**
 * Whether a request naming `host` in its `Host` header is for us. IP literals always are: DNS
 * rebinding needs a name the attacker controls, and a browser sends an address only when the page
 * itself came from that address. Names: `localhost` and `*.localhost`, the name the server binds,
 * and the names the operator allows (`allowed`, lower case).
 */
export function hostAllowed(host: string, boundHost: string, allowed: ReadonlySet<string>): boolean {
  if (isIP(host) !== 0) return true;
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return host === boundHost.toLowerCase() || allowed.has(host);
}
