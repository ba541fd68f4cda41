/** The handle of a local cluster that startCluster() returns: what quorate/broker publishes of it. */
import type { EventEmitter } from 'eventemitter3';
import type { MeshLinkStats } from '../netproxy/proxy-mesh.js';
import type { MemberFederationLink } from './start-cluster.js';
import type { MemberInfo, SupervisorEvents } from './types.js';

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
  /** `ws://127.0.0.1:PORT` (`wss://` with TLS) of each member, in id order (empty without `wsBasePort`). */
  readonly wsUrls: string[];
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
