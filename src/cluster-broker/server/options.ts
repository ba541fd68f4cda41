/** Options of the AMQP server, with their defaults. */
import type { SecureContextOptions } from 'node:tls';
import { DEFAULT_MAX_FRAME_SIZE, type Fields } from '../../codec/index.js';
import type { Logger } from '../../common/logger.js';
import { CLUSTER_ID_PROPERTY } from '../../wire-extensions.js';
import type { QueueOptions } from '../core/events.js';
import { MAX_STORABLE_MESSAGE_SIZE } from '../store/record-limit.js';
import { AuthThrottle, type AuthThrottleOptions } from './auth-throttle.js';
import type { BrokerBackend } from './backend.js';
import { DEFAULT_DYNAMIC_GRACE_MS } from './dynamic-nodes.js';
import type { Permissions as PublicPermissions } from './permission-check.js';
import { compilePermissions, type PermissionsConfig } from './permissions.js';
import { DEFAULT_MIN_DISK_FREE, defaultMaxMemory } from './resource-alarm.js';
import { PasswordChecker, type UserTable } from './users.js';
import type { VirtualSource } from './virtual-source.js';
import type { WebSocketListenOptions } from './ws-listener.js';

/**
 * The broker's injected logger (the common {@link Logger}); silent when absent. debug:
 * per-connection detail; info: listening, stopping; warn: a client misbehaved or a connection was
 * refused; error: the broker could not do its job (storage, replication).
 */
export type BrokerLogger = Logger;

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
  /**
   * Also serve AMQP over WebSocket (docs/websocket.md) on this port, with the same TLS, users,
   * permissions and limits (`wss://` when `tls` is set).
   */
  webSocket?: WebSocketListenOptions;
  /** SASL PLAIN users (user -> scrypt hash, see `hashPassword`). Absent: PLAIN is not offered. */
  users?: UserTable;
  /** Admit SASL ANONYMOUS and clients that skip SASL. Default true. */
  anonymous?: boolean;
  /** Refuse SASL PLAIN over a plain (non-TLS) socket. Default: true when `tls` is set, else false. */
  requireTlsForPlain?: boolean;
  /** Who may send to / receive from which address (permissions.ts). Absent: everyone may do everything. */
  permissions?: PublicPermissions | PermissionsConfig;
  /** Delays answering failed SASL attempts, per source address. */
  authThrottle?: AuthThrottleOptions;
  /** Connections from one source address at most; more are refused like `maxConnections`. Default 2_000. */
  maxConnectionsPerAddress?: number;
  /** Links (senders + receivers) attached at once on one connection at most; more are refused. Default 1_000. */
  maxLinksPerConnection?: number;
  /** Queues one connection may auto-create by attaching to new names. Default 1_000. */
  maxQueuesPerConnection?: number;
  /**
   * Memory limit, bytes (JavaScript heap + buffers): from 85% of it publishers get no more credit
   * until usage is back under it, so the broker stays near the limit. Default 40% of the machine's
   * memory (or of its cgroup limit); 0 = off.
   */
  maxMemory?: number;
  /** Disk alarm: below this many free bytes on `diskPath`'s file system, publishers get no more credit. Default 1 GiB; 0 = off. */
  minDiskFree?: number;
  /** Where the disk alarm looks (startBroker passes its data dir). Absent: no disk alarm. */
  diskPath?: string;
  /** Create a queue on the first attach to its name. Default true (false: amqp:not-found). */
  autoCreateQueues?: boolean;
  /** Options of queues created on attach (limits, dead-letter queue, dedup window). */
  queueDefaults?: QueueOptions;
  /**
   * Deduplicate by message-id every message on every queue (`--dedup`). Default false: only the
   * messages of senders that list `quorate:dedup` in their attach's desired-capabilities.
   */
  dedup?: boolean;
  /**
   * How long a temporary queue (a dynamic node, a non-durable topic subscription) outlives its
   * owner's lost link, waiting for the owner to re-attach (failover), on whichever member learns
   * of the loss (docs/topics.md#owner-gone). Default 30_000 ms. A clean detach or Close deletes it
   * at once.
   */
  dynamicNodeGraceMs?: number;
  /** Open connections at most; more are refused (Open, then Close resource-limit-exceeded). Default 10_000. */
  maxConnections?: number;
  /** Largest frame we accept (declared in Open). Default 1 MiB. */
  maxFrameSize?: number;
  /**
   * Largest message we accept from publishers (declared on their links). Default 16 MiB; at most
   * MAX_STORABLE_MESSAGE_SIZE (1 GiB less 1 MiB: one message must fit in one store record).
   */
  maxMessageSize?: number;
  /** Close a connection silent for this long (declared in Open; also bounds a partial frame). Default 60_000 ms. */
  idleTimeoutMs?: number;
  /** A connection must complete SASL and Open within this. Default 10_000 ms. */
  handshakeTimeoutMs?: number;
  /** Highest channel (sessions per connection - 1); a Begin above it closes the connection. Default 255. */
  channelMax?: number;
  /** Link credit granted to each publisher link (topped up as its messages are settled). Default 1000. */
  publisherCredit?: number;
  /**
   * The cluster id this broker belongs to (`--cluster-id`), sent in every Open as the
   * `quorate:cluster-id` property: federation links learn their upstream's from it.
   */
  clusterId?: string;
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
  /** Checks PLAIN passwords against `users` (absent without users). */
  passwords: PasswordChecker | undefined;
  requireTlsForPlain: boolean;
  permissions: PublicPermissions | undefined;
  throttle: AuthThrottle;
  maxConnectionsPerAddress: number;
  maxLinksPerConnection: number;
  maxQueuesPerConnection: number;
  maxMemory: number;
  minDiskFree: number;
  diskPath: string | undefined;
  autoCreateQueues: boolean;
  queueDefaults: QueueOptions;
  dedup: boolean;
  dynamicNodeGraceMs: number;
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

export const DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Default per-queue byte limit (queues created on attach): room for 1,000,000 x 1 KiB messages. */
export const DEFAULT_MAX_QUEUE_BYTES = 2 * 1024 * 1024 * 1024;
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 2_000;
export const DEFAULT_MAX_LINKS_PER_CONNECTION = 1_000;
export const DEFAULT_MAX_QUEUES_PER_CONNECTION = 1_000;

/** The Open properties plus `quorate:cluster-id` when the broker has a cluster id. */
function withClusterId(
  props: (() => Fields | undefined) | undefined,
  clusterId: string | undefined,
): (() => Fields | undefined) | undefined {
  if (clusterId === undefined) return props;
  return () => ({ ...props?.(), [CLUSTER_ID_PROPERTY]: clusterId });
}

export function resolveServerOptions(o: Omit<BrokerServerOptions, 'backend'>): ResolvedServerOptions {
  const positive = (v: number | undefined, d: number, name: string): number => {
    if (v === undefined) return d;
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a non-negative number`);
    return v;
  };
  const maxFrameSize = positive(o.maxFrameSize, DEFAULT_MAX_FRAME_SIZE, 'maxFrameSize');
  if (maxFrameSize < 512) throw new RangeError('maxFrameSize must be at least 512');
  const maxMessageSize = positive(o.maxMessageSize, DEFAULT_MAX_MESSAGE_SIZE, 'maxMessageSize');
  // 0 declares no limit on the link (AMQP), which the store could not keep: refused like too large
  if (maxMessageSize === 0 || maxMessageSize > MAX_STORABLE_MESSAGE_SIZE) {
    throw new RangeError(
      `maxMessageSize must be 1..${MAX_STORABLE_MESSAGE_SIZE} (a message must fit in one store record)`,
    );
  }
  const queueDefaults: QueueOptions = { maxBytes: DEFAULT_MAX_QUEUE_BYTES, ...o.queueDefaults };
  // 0 = no byte limit (QueueOptions itself has no "unlimited" value other than absence)
  if (queueDefaults.maxBytes === 0) delete queueDefaults.maxBytes;
  const permissions = o.permissions;
  return {
    containerId: o.containerId ?? `quorate-broker-${process.pid}`,
    anonymous: o.anonymous ?? true,
    users: o.users,
    passwords: o.users ? new PasswordChecker(o.users) : undefined,
    requireTlsForPlain: o.requireTlsForPlain ?? o.tls !== undefined,
    permissions: permissions === undefined ? undefined : compilePermissions(permissions),
    throttle: new AuthThrottle(o.authThrottle),
    maxConnectionsPerAddress: positive(
      o.maxConnectionsPerAddress,
      DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
      'maxConnectionsPerAddress',
    ),
    maxLinksPerConnection: positive(
      o.maxLinksPerConnection,
      DEFAULT_MAX_LINKS_PER_CONNECTION,
      'maxLinksPerConnection',
    ),
    maxQueuesPerConnection: positive(
      o.maxQueuesPerConnection,
      DEFAULT_MAX_QUEUES_PER_CONNECTION,
      'maxQueuesPerConnection',
    ),
    maxMemory: o.maxMemory === undefined ? defaultMaxMemory() : positive(o.maxMemory, 0, 'maxMemory'),
    minDiskFree: positive(o.minDiskFree, DEFAULT_MIN_DISK_FREE, 'minDiskFree'),
    diskPath: o.diskPath,
    autoCreateQueues: o.autoCreateQueues ?? true,
    queueDefaults,
    dedup: o.dedup ?? false,
    dynamicNodeGraceMs: positive(o.dynamicNodeGraceMs, DEFAULT_DYNAMIC_GRACE_MS, 'dynamicNodeGraceMs'),
    maxConnections: positive(o.maxConnections, 10_000, 'maxConnections'),
    maxFrameSize,
    maxMessageSize,
    idleTimeoutMs: positive(o.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    handshakeTimeoutMs: positive(o.handshakeTimeoutMs, 10_000, 'handshakeTimeoutMs'),
    channelMax: positive(o.channelMax, 255, 'channelMax'),
    publisherCredit: Math.max(1, positive(o.publisherCredit, 1000, 'publisherCredit')),
    openProperties: withClusterId(o.openProperties, o.clusterId),
    offeredCapabilities: o.offeredCapabilities,
    virtualSources: o.virtualSources ?? new Map(),
    logger: o.logger ?? {},
  };
}
