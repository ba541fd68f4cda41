/**
 * The reference broker for embedding and tests: `startBroker()`, `startMember()`, `startCluster()`.
 *
 * @module quorate/broker
 */
// `quorate/broker`: the reference broker for tests and embedding. It exports interfaces for the
// handles of what it starts (cluster-broker/api.ts), never the implementation classes, so their
// internals stay out of the published declarations (docs/architecture.md#public-surface).

import type { BrokerHandle, MemberHandle } from './cluster-broker/api.js';
import {
  type MemberOptions,
  type StartBrokerOptions,
  startBroker as startBrokerNode,
  startMember as startMemberNode,
} from './cluster-broker/assembly/index.js';

export type {
  BrokerHandle,
  BrokerServer,
  ClusterHandle,
  ClusterMesh,
  ClusterSupervisor,
  MemberHandle,
  Permissions,
} from './cluster-broker/api.js';
export type { BrokerStats, MemberOptions, StartBrokerOptions } from './cluster-broker/assembly/index.js';
export { MemberConfigError } from './cluster-broker/cluster/index.js';
export type { QueueInfo } from './cluster-broker/core/broker-state.js';
export type { LifetimePolicy, QueueOptions } from './cluster-broker/core/events.js';
export {
  type FederationConfig,
  FederationConfigError,
  type FederationLinkKind,
  type FederationLinkPhase,
  type FederationLinkState,
  ROUTE_ANNOTATION,
  type UpstreamConfig,
} from './cluster-broker/federation/index.js';
export type { HttpLimits } from './cluster-broker/http/http-limits.js';
export {
  type ClusterStatus,
  type HistoryDocument,
  type MemberEntry,
  MonitoringError,
  type Overview,
  type QueueEntry,
  type QueuesDocument,
} from './cluster-broker/http/index.js';
export type { CutMode, LinkProxyStats, MeshLinkStats } from './cluster-broker/netproxy/index.js';
export {
  type ClusterTlsOptions,
  ensureClusterSecret,
  isLoopbackHost,
  loadClusterSecret,
  loadClusterTls,
} from './cluster-broker/replication/index.js';
export type { PeerAddress } from './cluster-broker/replication/tcp-transport.js';
export type { AuthThrottleOptions } from './cluster-broker/server/auth-throttle.js';
export {
  BackendClosedError,
  BrokerConfigError,
  type BrokerLogger,
  type BrokerServerOptions,
  type BrokerServerStats,
  type ConnectionInfo,
  hashPassword,
  loadPermissionsFile,
  mayMonitor,
  OutcomeUnknownError,
  type PermissionsConfig,
  parseHash,
  parsePermissions,
  type UserPermissions,
  type VirtualSource,
  type VirtualSourceAttach,
  type VirtualSourceSink,
  verifyPassword,
} from './cluster-broker/server/index.js';
export type { PasswordHash, ScryptParams } from './cluster-broker/server/password-hash.js';
export type { AlarmKind } from './cluster-broker/server/resource-alarm.js';
export type { UserTable } from './cluster-broker/server/users.js';
export type { WebSocketListenOptions } from './cluster-broker/server/ws-listener.js';
export type { StoreStats } from './cluster-broker/store/event-store.js';
export {
  type ClusterTlsFiles,
  type MemberFederationLink,
  type MemberOutputHandler,
  type StartClusterOptions,
  startCluster,
} from './cluster-broker/supervisor/index.js';
export type {
  MemberExit,
  MemberFailed,
  MemberInfo,
  MemberRestart,
  MemberState,
  RestartPolicy,
  SupervisorEvents,
  SupervisorLogger,
} from './cluster-broker/supervisor/types.js';
export { type ListedMember, MEMBERSHIP_ADDRESS, MEMBERSHIP_CAPABILITY } from './wire-extensions.js';

// The two factories whose implementation returns more than the handle (the parts a cluster member
// wires, and tests read, from src/cluster-broker/): published with the public handle type.

/**
 * Starts a single-node broker in this process; resolves once it listens. With `dataDir` it
 * keeps its queues in a durable store (fsync before every acknowledgement), else in memory.
 */
export function startBroker(options: StartBrokerOptions = {}): Promise<BrokerHandle> {
  return startBrokerNode(options);
}

/**
 * Starts one cluster member in this process (docs/cluster-member.md); resolves once it listens.
 * It serves clients once the cluster has a quorum and it has caught up. Throws
 * MemberConfigError when its configuration cannot be right; nothing is started then.
 */
export function startMember(options: MemberOptions): Promise<MemberHandle> {
  return startMemberNode(options);
}
