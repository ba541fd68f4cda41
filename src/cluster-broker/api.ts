/**
 * The public face of the broker: what `quorate/broker` exports for the handles of a running
 * broker, cluster member or local cluster. The implementation (the BrokerServer class, the
 * backends, the Raft replica, the supervisor and proxy mesh classes) implements these and stays
 * unexported, so its internals never reach the published declarations (docs/architecture.md#public-surface).
 * Code inside the package that needs more (a member wiring its backend into the server, tests
 * reading the broker state) takes the wider types from the implementation files.
 */
import type { ListedMember } from '../wire-extensions.js';
import type { QueueInfo } from './core/broker-state.js';
import type { FederationLinkState } from './federation/link-state.js';
import type { ConnectionInfo } from './server/broker-connection.js';
import type { BrokerServerStats } from './server/broker-server.js';
import type { StoreStats } from './store/index.js';

/** The AMQP 1.0 server of a running broker, from {@link BrokerHandle.server}. */
export interface BrokerServer {
  /** The host it listens on. */
  readonly host: string;
  /** The port it listens on (the one chosen, when started with port 0). */
  readonly port: number;
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  /** `ws://host:port` (`wss://` with TLS) of the WebSocket listener; undefined without one. */
  readonly wsUrl: string | undefined;
  /** Our Open container-id. */
  readonly containerId: string;
  /** The client connections open now. */
  connections(): ConnectionInfo[];
  /** Connection, consumer and alarm counters now. */
  stats(): BrokerServerStats;
}

/** A running single-node broker, from {@link startBroker}. */
export interface BrokerHandle {
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  /** The port it listens on (the one chosen, when started with port 0). */
  readonly port: number;
  /** The host it listens on. */
  readonly host: string;
  /** `ws://host:port` (`wss://` with TLS) of AMQP over WebSocket; undefined without `webSocket`. */
  readonly wsUrl: string | undefined;
  /** The AMQP server. */
  readonly server: BrokerServer;
  /** `http://host:port` of the monitoring endpoints and status page; undefined without `httpPort`. */
  readonly httpUrl: string | undefined;
  /** Closes every connection, stops listening, flushes and closes the store (a local backend). */
  stop(): Promise<void>;
  /** Connection, consumer, queue and store counters. */
  stats(): BrokerStats;
  /** The cluster id in our Open (`--cluster-id`; docs/federation.md#cluster-id). */
  readonly clusterId: string;
  /** Each federation link's state now (docs/federation.md#operator); [] without `federation`. */
  federation(): FederationLinkState[];
}

/** A running cluster member, from {@link startMember}. */
export interface MemberHandle {
  /** The member's id. */
  readonly id: string;
  /** Unique per process start: tells this run's consumers from an earlier run's. */
  readonly incarnation: string;
  /** The port clients connect to. */
  readonly amqpPort: number;
  /** The port the other members connect to. */
  readonly clusterPort: number;
  /** The URL clients connect to. */
  readonly url: string;
  /** The WebSocket URL clients connect to (`ws://` or `wss://`); undefined without `webSocket`. */
  readonly wsUrl: string | undefined;
  /** The monitoring endpoints and status page (`http://host:port`); undefined without `httpPort`. */
  readonly httpUrl: string | undefined;
  /** The AMQP server of this member. */
  readonly broker: BrokerHandle;
  /** The members as this member lists them to clients now. */
  members(): ListedMember[];
  /** Closes client connections, leaves the cluster transport and closes the store. */
  stop(): Promise<void>;
}

/** What {@link BrokerHandle.stats} reports. */
export interface BrokerStats extends BrokerServerStats {
  /** Every queue and its size. */
  queues: QueueInfo[];
  /** The durable store's counters (a broker with a `dataDir`). */
  store?: StoreStats;
}

export type { Permissions } from './server/permission-check.js';
export type { ClusterHandle, ClusterMesh, ClusterSupervisor } from './supervisor/cluster-handle.js';
