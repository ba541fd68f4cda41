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

/**
 * What a resolved send() means: the broker accepted the message. Any other outcome (rejected,
 * released, modified) rejects send() with a SendError whose `outcome` says which.
 */
export interface SendResult {
  state: 'accepted';
  /** The message-id the message was sent with (the application's, or the one assigned). */
  messageId: MessageId;
  /** True if this delivery was written more than once (replayed after a failover). */
  resent: boolean;
}

/** The outcome an application gives a delivery (accept, reject, release, modify). */
export type SettleOutcome = 'accepted' | 'rejected' | 'released' | 'modified';

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
  /**
   * A new connection attempt starts (every attempt of a failover; from the second on in
   * connect()). `error`: why the previous attempt failed, if one did.
   */
  reconnecting: [info: { attempt: number; delayMs: number; url: string; error?: Error }];
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
