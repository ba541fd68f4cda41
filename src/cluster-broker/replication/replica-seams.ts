/**
 * What `Replica.start` wires in by default (a TcpTransport, setInterval), behind narrow
 * interfaces so the deterministic simulation (test/cluster-broker/replication/sim/) runs the real Replica on a
 * simulated network and clock (the clock and the file system are already `ReplicaOptions.clock`
 * and `ReplicaOptions.fs`). Internal: the package entry points export none of this.
 */
import type { Message } from './raft/types.js';

/** How a member reaches its peers; `TcpTransport` is the real one. */
export interface ReplicaTransport {
  /** Listen and start reaching the peers; resolves with the bound port. */
  start(): Promise<number>;
  /** Best effort: a message may be lost, delayed or reordered (Raft tolerates all three). */
  send(m: Message): void;
  /** Writes what `send` staged now rather than after this turn (before the caller blocks a while). */
  flushNow?(): void;
  close(): Promise<void>;
}

/**
 * Builds the transport; it hands every message it receives to `onMessage`, and the id of a
 * member whose connection to us closed to `onPeerLost` (a hint: the core may campaign sooner).
 */
export type TransportFactory = (
  onMessage: (m: Message) => void,
  onPeerLost: (peer: string) => void,
) => ReplicaTransport;

/** Calls `tick` every `ms` milliseconds until the returned function is called. */
export type Ticker = (tick: () => void, ms: number) => () => void;

/** Driver bugs a test turns on to see that the simulation catches them. Never set outside tests. */
export interface UnsafeDriverFlags {
  /** Send a Ready's messages before its writes are durable (a vote or an ack for lost state). */
  readonly sendBeforePersist?: boolean;
}

export interface ReplicaSeams {
  readonly transport?: TransportFactory;
  readonly ticker?: Ticker;
  readonly unsafe?: UnsafeDriverFlags;
}

export const intervalTicker: Ticker = (tick, ms) => {
  const timer = setInterval(tick, ms);
  return () => clearInterval(timer);
};
