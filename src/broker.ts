// `quorate/broker`: the reference broker for tests and embedding.

export {
  type ListedMember,
  MEMBERSHIP_ADDRESS,
  MEMBERSHIP_CAPABILITY,
  type MemberHandle,
  type MemberOptions,
  startMember,
} from './cluster-broker/cluster/index.js';
export type { QueueInfo } from './cluster-broker/core/broker-state.js';
export type { QueueOptions } from './cluster-broker/core/events.js';
export {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  BrokerConfigError,
  type BrokerHandle,
  type BrokerLogger,
  BrokerServer,
  type BrokerServerOptions,
  type BrokerServerStats,
  type BrokerStats,
  hashPassword,
  LocalBackend,
  loadPermissionsFile,
  mayMonitor,
  memoryBackend,
  OutcomeUnknownError,
  openLocalBackend,
  Permissions,
  type PermissionsConfig,
  parsePermissions,
  type StartBrokerOptions,
  startBroker,
  type UserPermissions,
  type VirtualSource,
  type VirtualSourceAttach,
  type VirtualSourceSink,
  verifyPassword,
} from './cluster-broker/server/index.js';
export {
  type ClusterHandle,
  type StartClusterOptions,
  startCluster,
} from './cluster-broker/supervisor/index.js';
