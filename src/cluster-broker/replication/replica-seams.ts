/**
 * What `Replica.start` wires in by default (a TcpTransport, setTimeout), behind narrow
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

/**
 * The Replica's one timer (docs/cluster-member.md#raft-timer): `arm(ms)` has it call `fire` once,
 * `ms` milliseconds from now, in place of any call armed before and not made yet; `stop()` drops
 * the armed call for good.
 */
export interface ReplicaTimer {
  arm(ms: number): void;
  stop(): void;
}

/** Builds the Replica's timer around its `fire` callback. */
export type TimerFactory = (fire: () => void) => ReplicaTimer;

/** Driver bugs a test turns on to see that the simulation catches them. Never set outside tests. */
export interface UnsafeDriverFlags {
  /** Send a Ready's messages before its writes are durable (a vote or an ack for lost state). */
  readonly sendBeforePersist?: boolean;
}

export interface ReplicaSeams {
  readonly transport?: TransportFactory;
  readonly timer?: TimerFactory;
  readonly unsafe?: UnsafeDriverFlags;
}

/**
 * The process's own timer: one setTimeout at a time; armed again for the same delay before it
 * fired (a follower moving its wake-up on with each heartbeat), the same one is restarted.
 */
export const timeoutTimer: TimerFactory = (fire) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let armedMs = 0;
  let stopped = false;
  const run = (): void => {
    timer = undefined;
    fire();
  };
  return {
    arm(ms) {
      if (stopped) return;
      if (timer !== undefined && ms === armedMs) {
        timer.refresh();
        return;
      }
      if (timer !== undefined) clearTimeout(timer);
      armedMs = ms;
      timer = setTimeout(run, ms);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
};
