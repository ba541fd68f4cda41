/** The single-node durable store: event log + snapshots around a BrokerState. */
export { crc32 } from './crc32.js';
export { StoreError } from './errors.js';
export {
  type Committed,
  type EventStore,
  openStore,
  type StoreLogger,
  type StoreOptions,
  type StoreStats,
} from './event-store.js';
