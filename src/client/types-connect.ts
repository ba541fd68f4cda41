/**
 * Public types of connect(): its options (reconnect, dial, TLS, logger, buffer) and the
 * per-call deadline every async call takes. Re-exported by types.ts.
 */
import type { Duplex } from 'node:stream';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { Logger } from '../common/logger.js';

/** Per-call deadline and cancellation, accepted by every async call. */
export interface CallOptions {
  /** Deadline in ms from the call; past it the call rejects with condition `quorate:timeout`. */
  timeoutMs?: number;
  /** Cancels the call; it then rejects with condition `quorate:aborted`. */
  signal?: AbortSignal;
}

/** How failover reconnects: backoff between attempts and when to give up. */
export interface ReconnectOptions {
  /** Give up after this many failed attempts in one outage. Default: Infinity (bounded by time). */
  maxAttempts?: number;
  /** Give up after this long without a connection, in ms. Default 60_000. */
  maxTimeMs?: number;
  /** One attempt (socket, SASL, Open) may take this long, ms. Default 10_000. */
  attemptTimeoutMs?: number;
  /** First backoff delay, ms. Default 50. */
  initialDelayMs?: number;
  /** Largest backoff delay, ms. Default 2_000. */
  maxDelayMs?: number;
  /** Backoff multiplier. Default 2. */
  factor?: number;
  /** Randomize delays (p-retry: each delay multiplied by a random factor in [1, 2)). Default true. */
  randomize?: boolean;
}

/** The member a {@link DialFunction} is asked to connect to, as its URL named it. */
export interface DialTarget {
  /**
   * The URL's scheme. For `'amqps'` the client runs TLS (with the `tls` options) over the stream
   * the dial returns, as it would over TCP; a dial that is its own secure channel uses `amqp://`.
   */
  readonly scheme: 'amqp' | 'amqps';
  /** The URL's host (IPv6 without brackets). */
  readonly host: string;
  /** The URL's port (5672 / 5671 when it has none). */
  readonly port: number;
}

/**
 * Opens the byte stream of one connection attempt, instead of a TCP socket: a Unix domain socket
 * (`net.connect(path)`), an in-memory pipe, a tunnel through a proxy. It returns (or resolves
 * with) a connected duplex stream; the client then runs TLS for `amqps`, SASL and the AMQP
 * handshake over it, within the attempt's timeout. `signal` is aborted when the attempt is given
 * up (its timeout, the connection closing). A dial that throws or rejects fails that attempt
 * with `quorate:connect-failed` and the thrown error as `cause`; failover then asks the dial for
 * the next member.
 */
export type DialFunction = (target: DialTarget, signal: AbortSignal) => Duplex | Promise<Duplex>;

/** Options of {@link connect}. `timeoutMs` / `signal` bound the first connection. */
export interface ConnectOptions extends CallOptions {
  /**
   * One URL or a list: `amqp://[user:pass@]host[:port]` or `amqps://...` (TCP, TLS), or AMQP over
   * WebSocket, `ws://host[:port][/path]` or `wss://...` (the path kept for a reverse proxy's
   * location, docs/websocket.md#client). A list may mix them.
   */
  urls: string | string[];
  /** SASL PLAIN user name for URLs that carry none. With no user name at all: SASL ANONYMOUS. */
  username?: string;
  /** SASL PLAIN password for URLs that carry none. */
  password?: string;
  /** Stable across reconnects; links re-attach under it. Default: a random UUID. */
  containerId?: string;
  /** Our idle timeout (declared in Open): a silent peer is detected within it. Default 10_000. */
  idleTimeoutMs?: number;
  /**
   * Fail over from a member that hangs (docs/failover.md#unresponsive): while it owes answers
   * (unsettled sends, deliveries it said are waiting for our credit) and sends nothing at all for
   * this long, it is probed; it is given up on when the probe is not answered within the larger
   * of this and 4 times the slowest recent probe answer (silence plus deadline capped by the idle
   * timeout). Idle connections keep the idle timeout. Default 250 ms, or off with
   * `reconnect: false` (there is no member to move to: a slow broker would only end the
   * connection); `0` or `false`: off.
   */
  unresponsiveTimeoutMs?: number | false;
  /**
   * TLS options for `amqps://` URLs (ca, cert, key, servername, rejectUnauthorized, ...), and for
   * `wss://` URLs, where they go to the `ws` package's WebSocket (docs/websocket.md#client).
   */
  tls?: TlsConnectionOptions;
  /**
   * Open each attempt's byte stream yourself instead of a TCP socket to the URL's host and port
   * (a Unix socket, an in-memory pipe, a proxy): see {@link DialFunction}. Default: net / tls.
   * For `amqp://` and `amqps://` URLs only: `ws://` and `wss://` URLs always open a WebSocket.
   */
  dial?: DialFunction;
  /** Virtual host sent as Open hostname. Default: the URL's host. */
  hostname?: string;
  /** Largest frame we accept. Default 1 MiB. */
  maxFrameSize?: number;
  /** Where the library logs (pino-compatible). Default: silent. */
  logger?: Logger;
  /**
   * Failover: reconnect to any member when the connection fails and replay what was not
   * settled. Default: on. `false`: a failed connection fails every pending operation.
   */
  reconnect?: ReconnectOptions | false;
  /**
   * The first connect() waits for members that are not there yet. Default false: when every
   * configured member refused the connection or did not speak AMQP on the first pass (and none
   * has ever connected), connect() rejects at once (`quorate:connect-failed`, each member's cause
   * in the message and in `info.members`) instead of retrying for `reconnect.maxTimeMs`. True:
   * keep retrying within the reconnect limits, for clients started before their brokers.
   * Failover after a first success always retries.
   */
  waitOnFirstConnect?: boolean;
  /** How members learned from brokers change the pool: 'replace' (default, as Qpid JMS) or 'add'. */
  membershipPolicy?: 'replace' | 'add';
  /** Try members in random order (default) or in the configured order. */
  randomizeMembers?: boolean;
  /** Bound on sends buffered while disconnected. Defaults 10_000 messages, 64 MiB. */
  bufferLimit?: {
    /** Most messages buffered. */
    messages?: number;
    /** Most encoded bytes buffered. */
    bytes?: number;
  };
  /** At the buffer bound: wait for room (default) or reject at once. */
  onFull?: 'wait' | 'reject';
}
