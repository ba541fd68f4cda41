/**
 * The public face of the broker: what `quorate/broker` exports for the handles of a running
 * broker, cluster member or local cluster. The implementation (the BrokerServer class, the
 * backends, the Raft replica, the supervisor and proxy mesh classes) implements these and stays
 * unexported, so its internals never reach the published declarations (docs/architecture.md#public-surface).
 * Code inside the package that needs more (a member wiring its backend into the server, tests
 * reading the broker state) takes the wider types from the implementation files.
 */
import type { EventEmitter } from 'eventemitter3';
import type { ListedMember } from '../wire-extensions.js';
import type { BrokerStats } from './assembly/start-broker.js';
import type { FederationLinkState } from './federation/link-state.js';
import type { MeshLinkStats } from './netproxy/proxy-mesh.js';
import type { ConnectionInfo } from './server/broker-connection.js';
import type { BrokerServerStats } from './server/broker-server.js';
import type { MemberFederationLink } from './supervisor/start-cluster.js';
import type { MemberInfo, SupervisorEvents } from './supervisor/types.js';

/** The AMQP 1.0 server of a running broker, from {@link BrokerHandle.server}. */
export interface BrokerServer {
  /** The host it listens on. */
  readonly host: string;
  /** The port it listens on (the one chosen, when started with port 0). */
  readonly port: number;
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  /** Our Open container-id. */
  readonly containerId: string;
  /** The client connections open now. */
  connections(): ConnectionInfo[];
  /** Connection, consumer and alarm counters now. */
  stats(): BrokerServerStats;
}

/**
 * A compiled permissions document (`parsePermissions`, `loadPermissionsFile`): who may send to,
 * receive from and monitor what (docs/production.md#permissions).
 */
export interface Permissions {
  /** May `user` (undefined: a connection that did not log in) send to `address`? */
  maySend(user: string | undefined, address: string): boolean;
  /** May `user` receive from `address`? */
  mayReceive(user: string | undefined, address: string): boolean;
  /** May `user` read the broker's HTTP monitoring API? */
  mayMonitor(user: string | undefined): boolean;
}

/** A running single-node broker, from {@link startBroker}. */
export interface BrokerHandle {
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  /** The port it listens on (the one chosen, when started with port 0). */
  readonly port: number;
  /** The host it listens on. */
  readonly host: string;
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
  /** The monitoring endpoints and status page (`http://host:port`); undefined without `httpPort`. */
  readonly httpUrl: string | undefined;
  /** The AMQP server of this member. */
  readonly broker: BrokerHandle;
  /** The members as this member lists them to clients now. */
  members(): ListedMember[];
  /** Closes client connections, leaves the cluster transport and closes the store. */
  stop(): Promise<void>;
}

/** The member processes' lifecycle events of a local cluster, from {@link ClusterHandle.supervisor}. */
export interface ClusterSupervisor {
  /** Calls `listener` on every `event` (member-ready, member-exit, member-restart, member-failed). */
  on<E extends EventEmitter.EventNames<SupervisorEvents>>(
    event: E,
    listener: EventEmitter.EventListener<SupervisorEvents, E>,
  ): this;
  /** Calls `listener` on the next `event` only. */
  once<E extends EventEmitter.EventNames<SupervisorEvents>>(
    event: E,
    listener: EventEmitter.EventListener<SupervisorEvents, E>,
  ): this;
  /** Removes a listener added by `on` or `once`. */
  off<E extends EventEmitter.EventNames<SupervisorEvents>>(
    event: E,
    listener?: EventEmitter.EventListener<SupervisorEvents, E>,
  ): this;
}

/**
 * The loopback proxies between the members of a local cluster, from {@link ClusterHandle.mesh}:
 * one per direction of every member pair, for faults on a single link.
 */
export interface ClusterMesh {
  /** Cuts the link from member `from` to member `to` (one direction). */
  cutLink(from: string, to: string): void;
  /** Heals the link from `from` to `to`. */
  healLink(from: string, to: string): void;
  /** Whether `from` reaches `to` now (its link is not cut). */
  canReach(from: string, to: string): boolean;
  /** Every link's counters now. */
  stats(): MeshLinkStats[];
}

/** A running local cluster, for tests: process faults by PID, network faults through proxies. */
export interface ClusterHandle {
  /** `amqp://127.0.0.1:PORT`, one per member, in id order. */
  readonly urls: string[];
  /** `http://127.0.0.1:PORT` of each member's status page and endpoints, in id order (empty with `httpBasePort: false`). */
  readonly httpUrls: string[];
  /** Member ids, `n1`..`nN`. */
  readonly ids: string[];
  /** Parent of the members' store dirs. */
  readonly dataDir: string;
  /** The cluster secret file the members were given. */
  readonly clusterSecretFile: string;
  /** The members' lifecycle events (member-ready, member-exit, member-restart, member-failed). */
  readonly supervisor: ClusterSupervisor;
  /** The proxies between members (for per-link faults: `mesh.cutLink(from, to)`). */
  readonly mesh: ClusterMesh;
  /** Every member: id, URL, pid, state. */
  members(): MemberInfo[];
  /** A real SIGKILL; the member stays down until `restart(id)` (`{ restart: true }`: auto-restart it). */
  kill(id: string, options?: { restart?: boolean }): Promise<void>;
  /** Starts the member again (stopping it first if running); resolves when it is ready. */
  restart(id: string): Promise<MemberInfo>;
  /** SIGSTOP; resolves once the process is stopped. */
  pause(id: string): Promise<void>;
  /** SIGCONT. */
  resume(id: string): Promise<void>;
  /**
   * Cuts every link between groups and heals every link inside one. Members named in no group
   * form one more group together: `partition([['n1']])` cuts n1 off from the rest.
   */
  partition(groups: readonly (readonly string[])[]): void;
  /** Each member reaches only its two neighbours in `order` (default n1..nN). */
  ring(order?: readonly string[]): void;
  /** Heals every link. */
  heal(): void;
  /** Delays every chunk between members by `ms` (0: full speed). */
  slow(ms: number): void;
  /** Resets links between members at random with probability `p` per chunk (0: off). */
  lossy(p: number, seed?: number): void;
  /** Resolves when the member (or every member) has printed its ready line. */
  waitReady(id?: string, timeoutMs?: number): Promise<void>;
  /**
   * Resolves when the member (or every member) serves: quorate, caught up, accepting clients
   * (its `/readyz` answers 200). Needs the members' HTTP ports. Default deadline 60_000 ms.
   */
  waitServing(id?: string, timeoutMs?: number): Promise<void>;
  /**
   * Every member's federation links as its `/api/federation` reports them now (members not
   * answering are left out; needs HTTP): the one running a link shows it `running` or
   * `connecting`, the others `standby`.
   */
  federation(): Promise<MemberFederationLink[]>;
  /** Stops every member (resuming paused ones first), closes the proxies, removes a temp data dir. */
  stop(): Promise<void>;
}
