/**
 * Replication for the clustered broker: a sans-I/O Raft core plus the real drivers (TCP
 * transport, fsync'd file storage with group commit) and the Replica that wires them together.
 */

export {
  CLUSTER_SECRET_FILE_NAME,
  ensureClusterSecret,
  isLoopbackHost,
  loadClusterSecret,
} from './cluster-secret.js';
export { type ClusterTlsOptions, loadClusterTls } from './cluster-tls.js';
export { NotLeaderError, ProposalOutcomeError, ReplicationError } from './errors.js';
export { FileStorage, type FileStorageOptions, type StoreDamage } from './file-storage.js';
export { FrameSplitter, fragments, MEMBER_MAX_FRAME } from './framing.js';
export { HANDSHAKE_MAX_FRAME } from './handshake.js';
export { type ProposalStatus, RaftCore } from './raft/core.js';
export type {
  Entry,
  HardState,
  InitialState,
  Message,
  PersistOps,
  RaftConfig,
  Ready,
  RecoveryReason,
  Role,
  Snapshot,
  SoftState,
  UnsafeFlags,
} from './raft/types.js';
export {
  type Committed,
  Replica,
  type ReplicaEvents,
  type ReplicaOptions,
  type StateMachine,
} from './replica.js';
export { assertSafeMessage, isCountable, UnsafeNumberError } from './safe-numbers.js';
export { persistToOps, StoreImage, type StoreOp } from './store-image.js';
export {
  HANDSHAKE_TIMEOUT_MS,
  type PeerAddress,
  parsePeers,
  TcpTransport,
  type TcpTransportOptions,
} from './tcp-transport.js';
export { amqpWireCodec, type WireCodec } from './wire.js';
export { binaryWireCodec } from './wire-binary.js';
