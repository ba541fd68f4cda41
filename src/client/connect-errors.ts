/**
 * What a failed connection attempt means: the error it is reported with, and whether trying
 * again can help. Permanent causes fail connect() at once: a host the DNS does not know, a TLS
 * certificate that does not verify (or a TLS handshake with something that does not speak TLS),
 * failed SASL authentication, and a peer that does not speak AMQP. Everything else (refused,
 * reset, timed out, not quorate) is transient and retried within the reconnect limits.
 */
import { AmqpError, ClientError } from '../errors.js';
import type { ServerAddress } from '../failover/index.js';
import { LostSocket } from './physical.js';

/** Node's TLS certificate verification failures (tls.TLSSocket authorizationError codes). */
const TLS_VERIFY_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A short human reason for a socket, DNS or TLS error. */
function reasonOf(err: Error): string {
  const code = codeOf(err);
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (code === 'ENOTFOUND') return 'host not found in DNS (ENOTFOUND)';
  if (code === 'EAI_AGAIN') return 'DNS lookup failed for now (EAI_AGAIN)';
  if (code === 'ECONNRESET') return 'connection reset (ECONNRESET)';
  if (code !== undefined && TLS_VERIFY_CODES.has(code))
    return `TLS certificate not trusted: ${err.message} (${code})`;
  // what OpenSSL says when the peer answers our ClientHello with something that is not TLS
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG')
    return `this port does not speak TLS: use amqp:// (${code})`;
  return code !== undefined && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}

/** Attempt failures known to be permanent (marked where the attempt knows why it failed). */
const permanent = new WeakSet<Error>();
/** Attempt failures that say no AMQP broker listens there (refused, closed without a word). */
const nobodyThere = new WeakSet<Error>();
/** Attempt failures whose peer never sent a byte within the first-byte deadline. */
const silent = new WeakSet<Error>();

/** The error of an attempt whose socket failed before the AMQP handshake (refused, DNS, TLS). */
export function socketFailure(host: string, port: number, err: Error): ClientError {
  const e = new ClientError('quorate:connect-failed', `${host}:${port}: ${reasonOf(err)}`, { cause: err });
  const code = codeOf(err);
  if (
    code === 'ENOTFOUND' ||
    (code !== undefined && (TLS_VERIFY_CODES.has(code) || code.startsWith('ERR_SSL_')))
  )
    permanent.add(e);
  if (code === 'ECONNREFUSED') nobodyThere.add(e);
  return e;
}

/**
 * The error of an attempt whose peer broke the protocol before Open (typically: it answered the
 * AMQP protocol header with something else, e.g. an HTTP server). Permanent.
 */
export function notAmqpFailure(host: string, port: number, cause: AmqpError): ClientError {
  const e = new ClientError(
    'quorate:connect-failed',
    `${host}:${port}: the peer does not speak AMQP 1.0 (${cause.description})`,
    { cause },
  );
  permanent.add(e);
  return e;
}

/** The error of an attempt whose peer never completed Open in time. */
export function noOpenFailure(host: string, port: number, timeoutMs: number): ClientError {
  return new ClientError('quorate:connect-failed', `${host}:${port}: no AMQP Open within ${timeoutMs} ms`);
}

/**
 * The error of an attempt whose peer accepted the connection (or whose kernel did) but sent
 * nothing within the first-byte deadline: a stopped or hung process (docs/failover.md#silent-member).
 */
export function noFirstByteFailure(host: string, port: number, deadlineMs: number): ClientError {
  const e = new ClientError(
    'quorate:connect-failed',
    `${host}:${port}: no answer to the AMQP header within ${Math.round(deadlineMs)} ms (a stopped or hung member)`,
  );
  silent.add(e);
  return e;
}

/** True for an attempt given up because the peer said nothing at all: hold it back like a hang. */
export function isSilentPeer(e: unknown): boolean {
  return e instanceof Error && silent.has(e);
}

/**
 * The error of an attempt whose connection closed before the peer's Open, without an AMQP error.
 * `firstBytes` null: a plain connection the peer closed without sending a byte, which is what a
 * TLS server does with our AMQP header (node's, for one): said as a hint.
 */
export function closedBeforeOpen(
  host: string,
  port: number,
  firstBytes: Uint8Array | null | undefined,
): ClientError {
  const hint = firstBytes === null ? ' without sending a byte (if this port serves TLS, use amqps://)' : '';
  const e = new ClientError(
    'quorate:connect-failed',
    `${host}:${port}: the connection closed before the AMQP handshake completed${hint}`,
  );
  nobodyThere.add(e);
  return e;
}

/**
 * True for the start of a TLS record (handshake 0x16 or alert 0x15, then version major 3): what a
 * TLS server answers to a plain AMQP header when it answers at all.
 */
export function looksLikeTls(first: Uint8Array): boolean {
  return (first[0] === 0x15 || first[0] === 0x16) && (first.length < 2 || first[1] === 0x03);
}

/** A plain amqp:// attempt answered in TLS: permanent, and says what to use instead. */
export function tlsPortFailure(host: string, port: number): ClientError {
  const e = new ClientError('quorate:connect-failed', `${host}:${port}: this port speaks TLS: use amqps://`);
  permanent.add(e);
  return e;
}

/** Wrong credentials: wrong on every member, never retried. */
export function isAuthFailure(e: unknown): boolean {
  return e instanceof AmqpError && e.condition === 'amqp:unauthorized-access';
}

/** True when retrying this attempt's failure (on any member) cannot help. */
export function isPermanentConnectFailure(e: unknown): boolean {
  return isAuthFailure(e) || (e instanceof Error && permanent.has(e));
}

/**
 * True when the attempt says no AMQP broker is there (refused, closed before the handshake, or a
 * permanent cause): what ends a first connect() after one pass (docs/failover.md#first-connect).
 */
export function isNobodyThere(e: unknown): boolean {
  return e instanceof Error && (nobodyThere.has(e) || permanent.has(e));
}

/** The description of an error without its condition prefix (for messages that wrap it). */
export function describeCause(e: unknown): string {
  if (e instanceof AmqpError) return `${e.condition} ${e.description}`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Why the connection was lost before the peer's Open: a socket error (refused, reset, TLS) as
 * connect-failed with its cause; a protocol-header mismatch as "not AMQP"; an AMQP error the peer
 * or our engine raised (SASL failure, a Close) as is.
 */
export function beforeOpenFailure(
  server: ServerAddress<unknown>,
  error: Error,
  firstBytes: Uint8Array | undefined,
): Error {
  if (server.scheme === 'amqp' && firstBytes !== undefined && looksLikeTls(firstBytes))
    return tlsPortFailure(server.host, server.port);
  if (error instanceof LostSocket) {
    return error.cause instanceof Error
      ? socketFailure(server.host, server.port, error.cause)
      : closedBeforeOpen(
          server.host,
          server.port,
          server.scheme === 'amqp' ? (firstBytes ?? null) : undefined,
        );
  }
  if (error instanceof AmqpError && error.condition === 'amqp:connection:framing-error')
    return notAmqpFailure(server.host, server.port, error);
  return error;
}

/** A connect() ended by its deadline or signal: the deadline's error as is, else `quorate:aborted`. */
export function connectAbortError(reason: unknown, cause: unknown): Error {
  if (reason instanceof ClientError) return reason;
  return new ClientError('quorate:aborted', 'connect aborted', { cause: reason ?? cause });
}
