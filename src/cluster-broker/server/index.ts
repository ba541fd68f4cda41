/** The broker's AMQP side: server, backend interface, single-node backend, startBroker. */
export { Activity, type ActivityTotals, type QueueActivity } from './activity.js';
export { availableQueues, queuesHeldBy } from './availability.js';
export {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  OutcomeUnknownError,
} from './backend.js';
export { BrokerConnection, type ConnectionInfo, type ConnectionIo } from './broker-connection.js';
export { BrokerServer, type BrokerServerStats } from './broker-server.js';
export { rewriteHeader } from './consumer-link.js';
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
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_MAX_MESSAGE_SIZE,
  type ResolvedServerOptions,
  resolveServerOptions,
} from './options.js';
export { type BrokerHandle, type BrokerStats, type StartBrokerOptions, startBroker } from './start-broker.js';
export { loadUsersFile, makeAuthenticator, parseUsers, saslMechanisms, type UserTable } from './users.js';
export type { VirtualSource, VirtualSourceAttach, VirtualSourceSink } from './virtual-source.js';
