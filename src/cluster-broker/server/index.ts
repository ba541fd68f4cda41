/** The broker's AMQP side: server, backend interface, single-node backend, startBroker. */
export { Activity, type ActivityTotals, type QueueActivity } from './activity.js';
export { AuthThrottle, type AuthThrottleOptions } from './auth-throttle.js';
export {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  OutcomeUnknownError,
} from './backend.js';
export { BrokerConnection, type ConnectionInfo, type ConnectionIo } from './broker-connection.js';
export { BrokerServer, type BrokerServerStats } from './broker-server.js';
export { BrokerConfigError } from './config-error.js';
export { ConsumerRegistry, newCounters, type ServerContext, type ServerCounters } from './context.js';
export { DEFAULT_DYNAMIC_GRACE_MS, DynamicNodes, TEMP_QUEUE_PREFIX } from './dynamic-nodes.js';
export {
  type EventCommitter,
  LocalBackend,
  type LocalBackendOptions,
  memoryBackend,
  memoryCommitter,
  openLocalBackend,
} from './local-backend.js';
export {
  type BrokerLogger,
  type BrokerServerOptions,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_LINKS_PER_CONNECTION,
  DEFAULT_MAX_MESSAGE_SIZE,
  DEFAULT_MAX_QUEUE_BYTES,
  DEFAULT_MAX_QUEUES_PER_CONNECTION,
  type ResolvedServerOptions,
  resolveServerOptions,
} from './options.js';
export {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  type PasswordHash,
  parseHash,
  type ScryptParams,
  verifyPassword,
} from './password-hash.js';
export {
  compilePattern,
  loadPermissionsFile,
  mayMonitor,
  Permissions,
  type PermissionsConfig,
  parsePermissions,
  type UserPermissions,
} from './permissions.js';
export {
  type AlarmKind,
  DEFAULT_MIN_DISK_FREE,
  defaultMaxMemory,
  memoryInUse,
  ResourceAlarm,
  systemMemory,
} from './resource-alarm.js';
export { rewriteHeader } from './rewrite-header.js';
export { makeAuthenticator, type PeerInfo, type SaslPolicy, saslMechanisms } from './sasl-policy.js';
export { loadUsersFile, PasswordChecker, parseUsers, type UserTable, withUserLine } from './users.js';
export type { VirtualSource, VirtualSourceAttach, VirtualSourceSink } from './virtual-source.js';
