/**
 * Public types of the client API: options, results and the typed event maps.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { MessageId } from '../codec/public.js';

/** pino-compatible logger subset. The library is silent unless one is given. */
export interface Logger {
  debug?(obj: unknown, msg?: string): void;
  info?(obj: unknown, msg?: string): void;
  warn?(obj: unknown, msg?: string): void;
  error?(obj: unknown, msg?: string): void;
}

/** Per-call deadline and cancellation, accepted by every async call. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

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

export interface ConnectOptions extends CallOptions {
  /** One URL or a list: `amqp://[user:pass@]host[:port]` or `amqps://...`. */
  urls: string | string[];
  username?: string;
  password?: string;
  /** Stable across reconnects; links re-attach under it. Default: a random UUID. */
  containerId?: string;
  /** Our idle timeout (declared in Open): a silent peer is detected within it. Default 10_000. */
  idleTimeoutMs?: number;
  /** TLS options for `amqps://` URLs (ca, cert, key, servername, rejectUnauthorized, ...). */
  tls?: TlsConnectionOptions;
  /** Virtual host sent as Open hostname. Default: the URL's host. */
  hostname?: string;
  /** Largest frame we accept. Default 1 MiB. */
  maxFrameSize?: number;
  logger?: Logger;
  /**
   * Failover: reconnect to any member when the connection fails and replay what was not
   * settled. Default: on. `false`: a failed connection fails every pending operation.
   */
  reconnect?: ReconnectOptions | false;
  /** How members learned from brokers change the pool: 'replace' (default, as Qpid JMS) or 'add'. */
  membershipPolicy?: 'replace' | 'add';
  /** Try members in random order (default) or in the configured order. */
  randomizeMembers?: boolean;
  /** Bound on sends buffered while disconnected. Defaults 10_000 messages, 64 MiB. */
  bufferLimit?: { messages?: number; bytes?: number };
  /** At the buffer bound: wait for room (default) or reject at once. */
  onFull?: 'wait' | 'reject';
}

/** Options of one send(): its deadline and cancellation. */
export type SendOptions = CallOptions;

export interface SenderOptions extends CallOptions {
  /** Link name; default derived from the address and a counter, stable across re-attach. */
  name?: string;
  /** Send pre-settled (at-most-once). Default false: every send waits for the broker's outcome. */
  presettled?: boolean;
}

export interface ReceiverOptions extends CallOptions {
  name?: string;
  /** Prefetch window topped up automatically. Default 100. 0: grant credit with addCredit(n). */
  credit?: number;
  /** Ask for rcv-settle-mode second (confirmed accept) where offered. Default true. */
  confirmAccept?: boolean;
  /** Message-ids remembered for duplicate suppression. Defaults 10_000 ids, 10 minutes. */
  dedup?: { maxIds?: number; maxAgeMs?: number } | false;
  /**
   * Ask the broker for a temporary queue of its own naming (a dynamic source; `openReceiver({
   * dynamic: true })`): `receiver.address` is its address once attached (e.g. a reply-to). After
   * a failover the receiver re-attaches to that address; the broker keeps the node for its grace
   * period. The node is deleted when the receiver closes.
   */
  dynamic?: boolean;
  /**
   * A JMS message selector (`apache.org:selector-filter:string`), e.g. `"colour = 'green'"`:
   * the broker only delivers matching messages to this receiver. Refused at attach when malformed.
   */
  selector?: string;
}

/** An AMQP error as carried in a rejected outcome. */
export interface OutcomeError {
  condition: string;
  description?: string;
  info?: Record<string, unknown>;
}

export type Outcome =
  | { state: 'accepted' }
  | { state: 'rejected'; error?: OutcomeError }
  | { state: 'released' }
  | { state: 'modified'; deliveryFailed?: boolean; undeliverableHere?: boolean };

export type SendResult = Outcome & {
  /** The message-id the message was sent with (the application's, or the one assigned). */
  messageId: MessageId;
  /** True if this delivery was written more than once (replayed after a failover). */
  resent: boolean;
};

export interface ModifyOptions {
  deliveryFailed?: boolean;
  undeliverableHere?: boolean;
}

export interface FailoverEvent {
  from?: string;
  to: string;
  reason?: string;
  durationMs: number;
  resent: number;
  reattached: number;
}

export interface ConnectionEvents {
  connected: [info: { url: string; containerId: string; remoteContainerId: string }];
  disconnected: [info: { url: string; error?: Error }];
  reconnecting: [info: { attempt: number; delayMs: number; url: string }];
  failover: [info: FailoverEvent];
  membership: [info: { members: string[]; added: string[]; removed: string[] }];
  inDoubt: [info: { messageId: MessageId; address: string }];
  error: [error: Error];
  closed: [info: { error?: Error }];
}

export interface LinkEvents {
  /** (Re-)attached: after openSender/openReceiver and after every failover. */
  attached: [];
  /** The link is gone for now (connection lost: it re-attaches) or for good (`closed`). */
  detached: [info: { error?: Error; closed: boolean }];
  error: [error: Error];
}

/** Receiver-side confirmation mode actually in force (the broker may refuse `second`). */
export type SettleMode = 'first' | 'second';
