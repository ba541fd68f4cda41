/**
 * What a TCP transport between members (tcp-transport.ts) is configured with, apart from its code
 * so the member's assembly and its tests can name them without it.
 */
import type { Logger } from '../../common/logger.js';
import type { ClusterTlsOptions } from './cluster-tls.js';
import type { PeerAddress } from './peer-address.js';
import type { Message } from './raft/types.js';
import type { WireCodec } from './wire.js';

/** Default for `handshakeTimeoutMs`: a connection is closed within 2 s unless authenticated. */
export const HANDSHAKE_TIMEOUT_MS = 1800;

export interface TcpTransportOptions {
  readonly id: string;
  readonly clusterId: string;
  /** Where to listen (port 0: any free port). */
  readonly listen: PeerAddress;
  /** Address to dial for every other member. */
  readonly peers: Readonly<Record<string, PeerAddress>>;
  readonly codec: WireCodec;
  readonly onMessage: (m: Message) => void;
  /** An authenticated connection from `peer` closed (it may be dead: Raft may campaign sooner). */
  readonly onPeerLost?: (peer: string) => void;
  /** The cluster secret every member proves it holds; absent: none (loopback-only clusters). */
  readonly secret?: Uint8Array;
  /** Mutual TLS on the cluster port (both sides present and verify certificates). */
  readonly tls?: ClusterTlsOptions;
  /** Close a connection not authenticated this long after it opened. Default HANDSHAKE_TIMEOUT_MS. */
  readonly handshakeTimeoutMs?: number;
  readonly logger?: Logger;
  /** Reconnect backoff, ms (doubling, with jitter). Defaults 20 / 1000. */
  readonly reconnectMin?: number;
  readonly reconnectMax?: number;
  /** Largest frame after the handshake (larger messages are fragmented). Default MEMBER_MAX_FRAME. */
  readonly maxFrame?: number;
  /** Largest reassembled message (a snapshot). Default: the largest Buffer Node allows. */
  readonly maxMessage?: number;
  /** Drop messages while this many bytes are queued on a socket. Default 64 MiB. */
  readonly maxQueued?: number;
}
