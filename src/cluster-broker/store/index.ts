/** The single-node durable store: event log + snapshots around a BrokerState. */
// Building blocks a replicated log can reuse (same framing, same atomic snapshot file).
export { crc32 } from '../files/crc32.js';
export { type DurableFile, type DurableFs, nodeDurableFs } from '../files/durable-fs.js';
export { FSYNC_BUCKETS_SECONDS, LatencyHistogram } from '../files/latency-histogram.js';
export { RecordTooLargeError, StoreCorruptionError, StoreError } from './errors.js';
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
  MAX_RECORD_BYTES,
  RECORD_HEADER_BYTES,
  type ScanResult,
  scanRecords,
} from './record-format.js';
export { SEGMENT_HEADER_BYTES, segmentHeader } from './segment-header.js';
export { MAX_SEGMENT_BYTES } from './segments.js';
export { fsyncDir, readSnapshotFile, type SnapshotContents, writeSnapshotFile } from './snapshot-file.js';
