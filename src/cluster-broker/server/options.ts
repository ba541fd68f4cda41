/** Options of the AMQP server, with their defaults. */
import type { SecureContextOptions } from 'node:tls';
import type { Fields } from '../../codec/index.js';
import type { QueueOptions } from '../core/events.js';
import type { BrokerBackend } from './backend.js';
import type { UserTable } from './users.js';
import type { VirtualSource } from './virtual-source.js';

/** Injected logger (pino-compatible subset); silent when absent. */
export interface BrokerLogger {
  /** Per-connection detail. */
  debug?(obj: unknown, msg?: string): void;
  /** Lifecycle: listening, stopping. */
  info?(obj: unknown, msg?: string): void;
  /** A client misbehaved or a connection was refused. */
  warn?(obj: unknown, msg?: string): void;
  /** The broker could not do its job (storage, replication). */
  error?(obj: unknown, msg?: string): void;
}

/** Options of the AMQP server ({@link startBroker} takes all but `backend`). */
export interface BrokerServerOptions {
  /** @internal Where events are committed. */
  backend: BrokerBackend;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Our Open container-id. Default `quorate-broker-<pid>`. */
  containerId?: string;
  /** TLS (amqps): every connection is TLS. `cert` and `key` (PEM) at least. */
  tls?: SecureContextOptions;
  /** SASL PLAIN users (user -> password). Absent: PLAIN is not offered. */
  users?: UserTable;
  /** Admit SASL ANONYMOUS and clients that skip SASL. Default true. */
  anonymous?: boolean;
  /** Create a queue on the first attach to its name. Default true (false: amqp:not-found). */
  autoCreateQueues?: boolean;
  /** Options of queues created on attach (limits, dead-letter queue, dedup window). */
  queueDefaults?: QueueOptions;
  /** Open connections at most; more are refused (Open, then Close resource-limit-exceeded). Default 10_000. */
  maxConnections?: number;
  /** Largest frame we accept (declared in Open). Default 1 MiB. */
  maxFrameSize?: number;
  /** Largest message we accept from publishers (declared on their links). Default 16 MiB. */
  maxMessageSize?: number;
  /** Close a connection silent for this long (declared in Open; also bounds a partial frame). Default 60_000 ms. */
  idleTimeoutMs?: number;
  /** A connection must complete SASL and Open within this. Default 10_000 ms. */
  handshakeTimeoutMs?: number;
  /** Highest channel (sessions per connection - 1). Default 255. */
  channelMax?: number;
  /** Link credit granted to each publisher link (topped up as its messages are settled). Default 1000. */
  publisherCredit?: number;
  /** Extra Open properties (the cluster's `failover-server-list` etc.), evaluated per connection. */
  openProperties?: () => Fields | undefined;
  /** Offered capabilities in our Open (e.g. `quorate:membership`), evaluated per connection. */
  offeredCapabilities?: () => string[] | undefined;
  /** Addresses served by code (e.g. `$cluster/membership`). */
  virtualSources?: ReadonlyMap<string, VirtualSource>;
  /** Where the broker logs (pino-compatible). Default: silent. */
  logger?: BrokerLogger;
}

export interface ResolvedServerOptions {
  containerId: string;
  anonymous: boolean;
  users: UserTable | undefined;
  autoCreateQueues: boolean;
  queueDefaults: QueueOptions;
  maxConnections: number;
  maxFrameSize: number;
  maxMessageSize: number;
  idleTimeoutMs: number;
  handshakeTimeoutMs: number;
  channelMax: number;
  publisherCredit: number;
  openProperties: (() => Fields | undefined) | undefined;
  offeredCapabilities: (() => string[] | undefined) | undefined;
  virtualSources: ReadonlyMap<string, VirtualSource>;
  logger: BrokerLogger;
}

export const DEFAULT_MAX_FRAME_SIZE = 1024 * 1024;
export const DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export function resolveServerOptions(o: Omit<BrokerServerOptions, 'backend'>): ResolvedServerOptions {
  const positive = (v: number | undefined, d: number, name: string): number => {
    if (v === undefined) return d;
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a non-negative number`);
    return v;
  };
  const maxFrameSize = positive(o.maxFrameSize, DEFAULT_MAX_FRAME_SIZE, 'maxFrameSize');
  if (maxFrameSize < 512) throw new RangeError('maxFrameSize must be at least 512');
  return {
    containerId: o.containerId ?? `quorate-broker-${process.pid}`,
    anonymous: o.anonymous ?? true,
    users: o.users,
    autoCreateQueues: o.autoCreateQueues ?? true,
    queueDefaults: o.queueDefaults ?? {},
    maxConnections: positive(o.maxConnections, 10_000, 'maxConnections'),
    maxFrameSize,
    maxMessageSize: positive(o.maxMessageSize, DEFAULT_MAX_MESSAGE_SIZE, 'maxMessageSize'),
    idleTimeoutMs: positive(o.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    handshakeTimeoutMs: positive(o.handshakeTimeoutMs, 10_000, 'handshakeTimeoutMs'),
    channelMax: positive(o.channelMax, 255, 'channelMax'),
    publisherCredit: Math.max(1, positive(o.publisherCredit, 1000, 'publisherCredit')),
    openProperties: o.openProperties,
    offeredCapabilities: o.offeredCapabilities,
    virtualSources: o.virtualSources ?? new Map(),
    logger: o.logger ?? {},
  };
}
