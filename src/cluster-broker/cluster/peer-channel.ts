/**
 * Sending member-to-member application messages (peer-wire.ts) on the Replica's own transport,
 * so they share its connections (and a test's proxies and partitions) with the Raft messages.
 *
 * Replica keeps its transport private; until it offers a public hook for application messages we
 * reach it here, in one place, and fail loudly at start-up if its shape ever changes.
 */
import type { Message } from '../replication/raft/types.js';
import { type AppMessage, carry } from './peer-wire.js';

interface TransportLike {
  send(m: Message): void;
  isConnected(peer: string): boolean;
}

function isTransportLike(t: unknown): t is TransportLike {
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof (t as TransportLike).send === 'function' &&
    typeof (t as TransportLike).isConnected === 'function'
  );
}

/** A sender for `replica`'s transport: false (nothing sent) when the peer is not connected. */
export function peerSender(replica: object): (m: AppMessage) => boolean {
  const transport = (replica as { transport?: unknown }).transport;
  if (!isTransportLike(transport)) {
    throw new Error('cluster member: the replica exposes no transport for member-to-member messages');
  }
  return (m) => {
    if (!transport.isConnected(m.to)) return false;
    transport.send(carry(m));
    return true;
  };
}
