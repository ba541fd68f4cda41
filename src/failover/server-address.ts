/**
 * A broker endpoint the client may connect to, and the parsing of configured URLs into one.
 * `amqp://user:pass@host:port` and `amqps://...` (WHATWG URL); default ports 5672 / 5671.
 * `ws://` and `wss://` are AMQP over WebSocket (docs/websocket.md), default ports 80 / 443, and
 * keep their path (a reverse proxy's location).
 */
import { ArgumentTypeError } from '../errors.js';
import { type AmqpScheme, isAmqpScheme, isWebSocketScheme } from '../wire-extensions.js';

export const DEFAULT_PORTS: Readonly<Record<AmqpScheme, number>> = {
  amqp: 5672,
  amqps: 5671,
  ws: 80,
  wss: 443,
};

/** Where a pool entry came from. */
export type ServerSource = 'configured' | 'learned' | 'redirect';

/**
 * One endpoint. `O` is opaque per-endpoint connect options (e.g. TLS options) that the client
 * attached to a configured URL; learned members inherit them (and the credentials) from the
 * endpoint they were learned through.
 */
export interface ServerAddress<O = unknown> {
  /** identity in the pool: `host:port`, host lowercased (IPv6 in brackets) */
  readonly key: string;
  readonly scheme: AmqpScheme;
  /** the network host to dial (IPv6 without brackets) */
  readonly host: string;
  readonly port: number;
  /** ws / wss: the URL's path and query (`/` when it had none) */
  readonly path?: string;
  /** the Open frame `hostname` (virtual host) to send, when the broker told us one */
  readonly hostname?: string;
  readonly username?: string;
  readonly password?: string;
  readonly options?: O;
  readonly source: ServerSource;
  /** broker-reported identity and quorum state (`quorate:*` keys), when known */
  readonly memberId?: string;
  readonly quorate?: boolean;
  readonly leader?: boolean;
}

/** A configured server: a URL string, or a URL plus opaque per-endpoint options. */
export type ServerConfig<O = unknown> = string | { url: string; options?: O };

export function serverKey(host: string, port: number): string {
  const h = host.toLowerCase();
  return h.includes(':') ? `[${h}]:${port}` : `${h}:${port}`;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Parse a configured URL; throws a TypeError with code 'ERR_INVALID_URL' on anything unusable. */
export function parseServerUrl<O = unknown>(config: ServerConfig<O>): ServerAddress<O> {
  const url = typeof config === 'string' ? config : config.url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new ArgumentTypeError('ERR_INVALID_URL', `not a URL: ${JSON.stringify(url)}`, { cause });
  }
  const scheme = parsed.protocol.replace(/:$/, '').toLowerCase();
  if (!isAmqpScheme(scheme)) {
    throw new ArgumentTypeError(
      'ERR_INVALID_URL',
      `unsupported scheme ${JSON.stringify(scheme)} in ${JSON.stringify(url)} (amqp, amqps, ws or wss)`,
    );
  }
  const host = stripBrackets(parsed.hostname);
  if (host === '') throw new ArgumentTypeError('ERR_INVALID_URL', `no host in ${JSON.stringify(url)}`);
  const port = parsed.port === '' ? DEFAULT_PORTS[scheme] : Number(parsed.port);
  const address: {
    -readonly [K in keyof ServerAddress<O>]: ServerAddress<O>[K];
  } = { key: serverKey(host, port), scheme, host, port, source: 'configured' };
  if (isWebSocketScheme(scheme)) address.path = `${parsed.pathname}${parsed.search}`;
  if (parsed.username !== '') address.username = safeDecode(parsed.username);
  if (parsed.password !== '') address.password = safeDecode(parsed.password);
  if (typeof config !== 'string' && config.options !== undefined) address.options = config.options;
  return address;
}

/** For logs and events: the URL without the password. */
export function describeServer(server: ServerAddress): string {
  const user = server.username === undefined ? '' : `${encodeURIComponent(server.username)}@`;
  const host = server.host.includes(':') ? `[${server.host}]` : server.host;
  return `${server.scheme}://${user}${host}:${server.port}`;
}
