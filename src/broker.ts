// `quorate/broker`: the reference broker for tests and embedding.

export {
  type ListedMember,
  MEMBERSHIP_ADDRESS,
  MEMBERSHIP_CAPABILITY,
  MemberConfigError,
  type MemberHandle,
  type MemberOptions,
  startMember,
} from './cluster-broker/cluster/index.js';
export type { QueueInfo } from './cluster-broker/core/broker-state.js';
export type { QueueOptions } from './cluster-broker/core/events.js';
export type { CutMode } from './cluster-broker/netproxy/link-proxy.js';
export {
  type ClusterTlsOptions,
  ensureClusterSecret,
  isLoopbackHost,
  loadClusterSecret,
  loadClusterTls,
} from './cluster-broker/replication/index.js';
export type { PeerAddress } from './cluster-broker/replication/tcp-transport.js';
export {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  type BrokerHandle,
  type BrokerLogger,
  BrokerServer,
  type BrokerServerOptions,
  type BrokerServerStats,
  type BrokerStats,
  LocalBackend,
  memoryBackend,
  OutcomeUnknownError,
  openLocalBackend,
  type StartBrokerOptions,
  startBroker,
  type VirtualSource,
  type VirtualSourceAttach,
  type VirtualSourceSink,
} from './cluster-broker/server/index.js';
export type { UserTable } from './cluster-broker/server/users.js';
export type { StoreStats } from './cluster-broker/store/event-store.js';
export {
  type ClusterHandle,
  type ClusterTlsFiles,
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
