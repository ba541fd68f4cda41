/**
 * The reference broker for embedding and tests: `startBroker()`, `startMember()`, `startCluster()`.
 *
 * @module quorate/broker
 */
// `quorate/broker`: the reference broker for tests and embedding.

export {
  type BrokerHandle,
  type BrokerStats,
  type MemberHandle,
  type MemberOptions,
  type StartBrokerOptions,
  startBroker,
  startMember,
} from './cluster-broker/assembly/index.js';
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
  type ClusterSource,
  type ClusterStatus,
  type HistoryDocument,
  type MemberEntry,
  MonitoringError,
  type Overview,
  type QueueEntry,
  type QueuesDocument,
} from './cluster-broker/http/index.js';
export type { CutMode } from './cluster-broker/netproxy/link-proxy.js';
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
  type BrokerBackend,
  type BrokerBackendEvents,
  BrokerConfigError,
  type BrokerLogger,
  BrokerServer,
  type BrokerServerOptions,
  type BrokerServerStats,
  type ConnectionInfo,
  hashPassword,
  LocalBackend,
  loadPermissionsFile,
  mayMonitor,
  memoryBackend,
  OutcomeUnknownError,
  openLocalBackend,
  Permissions,
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
export type { StoreStats } from './cluster-broker/store/event-store.js';
export {
  type ClusterHandle,
  type ClusterTlsFiles,
  type MemberFederationLink,
  type MemberOutputHandler,
  type StartClusterOptions,
  startCluster,
} from './cluster-broker/supervisor/index.js';
export type {
  MemberInfo,
  MemberState,
  RestartPolicy,
  SupervisorLogger,
} from './cluster-broker/supervisor/types.js';
export { type ListedMember, MEMBERSHIP_ADDRESS, MEMBERSHIP_CAPABILITY } from './wire-extensions.js';
