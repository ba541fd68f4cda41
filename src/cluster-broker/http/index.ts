/** Monitoring: the HTTP server a broker starts with `httpPort`, its documents, `status`. */
export {
  basicAuthenticator,
  basicUserVerifier,
  type HttpAuthenticator,
  type HttpUserVerifier,
  parseBasic,
} from './basic-auth.js';
export { MonitoringError } from './errors.js';
export { BrokerMetrics } from './metrics.js';
export { type MonitoredBroker, monitoredBroker, type QueueRow } from './monitored-broker.js';
export { MonitoringServer, type MonitoringServerOptions } from './monitoring-server.js';
export { type HistoryDocument, QueueHistory } from './queue-history.js';
export { singleNodeSource } from './single-node-source.js';
export type {
  ClusterSource,
  ClusterStatus,
  MemberEntry,
  Overview,
  QueueEntry,
  QueuesDocument,
} from './types.js';
