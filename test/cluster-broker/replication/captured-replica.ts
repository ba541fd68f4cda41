/**
 * The real Replica as n1 of a 3-member cluster whose transport is captured (what it sends is
 * recorded, what it receives is handed in by the test), on a fake clock, with a timer that records
 * what it is armed for and fires only when the test says. The base of captured-leader.ts (brought
 * to leadership) and of the timer tests (left a follower).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, RaftConfig } from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica, type StateMachine } from '../../../src/cluster-broker/replication/replica.js';

export const settle = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export interface CapturedReplicaOptions {
  stateMachine?: StateMachine;
  snapshotEvery?: number;
  raft?: Omit<RaftConfig, 'id' | 'members'>;
  /** Called with each message as n1 sends it (after it is recorded in `sent`). */
  onSend?: (m: Message) => void;
  /** The transport's `flushNow`, when the test watches for it. */
  onFlushNow?: () => void;
}

export interface CapturedReplica {
  readonly replica: Replica;
  /** Everything n1 sent, with the fake time it was sent at. */
  readonly sent: Array<{ at: number; m: Message }>;
  /** The fake clock: move it forward with `clock.now += ms`. */
  readonly clock: { now: number };
  /** Hands `m` to n1 as its transport would. */
  deliver(m: Message): void;
  /** Tells n1 its connection with `peer` closed. */
  peerLost(peer: string): void;
  /** Fires the timer now, armed or not. */
  fire(): void;
  /** When the timer is armed to fire (fake ms), or undefined when it is not armed. */
  dueAt(): number | undefined;
  /** How many times the timer was armed. */
  arms(): number;
  /** Closes the replica and removes its data dir. */
  close(): Promise<void>;
}

export async function startCapturedReplica(opts: CapturedReplicaOptions = {}): Promise<CapturedReplica> {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-captured-replica-'));
  const clock = { now: 1_000 };
  const sent: Array<{ at: number; m: Message }> = [];
  let deliver: (m: Message) => void = () => {};
  let peerLost: (peer: string) => void = () => {};
  let fire: () => void = () => {};
  let due: number | undefined;
  let arms = 0;
  const addr = { host: '127.0.0.1', port: 1 };
  const replica = await Replica.start(
    {
      id: 'n1',
      clusterId: 'c',
      members: { n1: addr, n2: addr, n3: addr },
      dataDir: dir,
      stateMachine: opts.stateMachine ?? { apply: () => {}, restore: () => {} },
      ...(opts.snapshotEvery !== undefined ? { snapshotEvery: opts.snapshotEvery } : {}),
      ...(opts.raft !== undefined ? { raft: opts.raft } : {}),
      clock: () => clock.now,
    },
    {
      transport: (onMessage, onPeerLost) => {
        deliver = onMessage;
        peerLost = onPeerLost;
        return {
          start: async () => 0,
          send: (m) => {
            sent.push({ at: clock.now, m });
            opts.onSend?.(m);
          },
          ...(opts.onFlushNow ? { flushNow: opts.onFlushNow } : {}),
          close: async () => {},
        };
      },
      timer: (f) => {
        fire = () => {
          due = undefined;
          f();
        };
        return {
          arm: (ms) => {
            arms++;
            due = clock.now + ms;
          },
          stop: () => {
            due = undefined;
          },
        };
      },
    },
  );
  return {
    replica,
    sent,
    clock,
    deliver: (m) => deliver(m),
    peerLost: (peer) => peerLost(peer),
    fire: () => fire(),
    dueAt: () => due,
    arms: () => arms,
    close: async () => {
      await replica.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
