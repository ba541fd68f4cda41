/** The single-node durable store: event log + snapshots around a BrokerState. */
// (the file helpers it shares with the cluster member's store live in ../files/, imported from there)
export { StoreCorruptionError } from './errors.js';
export {
  type Committed,
  type EventStore,
  openStore,
  type RepairReport,
  type StoreLogger,
  type StoreOptions,
  type StoreStats,
} from './event-store.js';
export { QUARANTINE_DIR } from './quarantine.js';
export {
  frameRecord,
  RECORD_HEADER_BYTES,
  type ScanResult,
  scanRecords,
} from './record-format.js';
export { SEGMENT_HEADER_BYTES, segmentHeader } from './segment-header.js';
export { MAX_SEGMENT_BYTES } from './segments.js';
export { fsyncDir, readSnapshotFile, type SnapshotContents, writeSnapshotFile } from './snapshot-file.js';
