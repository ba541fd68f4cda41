/**
 * The real Replica as n1 of a 3-member cluster whose transport is captured (what it sends is
 * recorded, what it receives is handed in by the test), with a timer the test fires by hand and a
 * fake clock, brought to leadership of a new cluster. For tests of what a leader sends and when.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica, type StateMachine } from '../../../src/cluster-broker/replication/replica.js';

export const settle = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export interface CapturedLeader {
  readonly replica: Replica;
  /** Everything n1 sent, with the fake time it was sent at. */
  readonly sent: Array<{ at: number; m: Message }>;
  /** The fake clock: move it forward with `clock.now += ms`. */
  readonly clock: { now: number };
  deliver(m: Message): void;
  tick(): void;
  /** Closes the replica and removes its data dir. */
  close(): Promise<void>;
}

export interface CapturedLeaderOptions {
  stateMachine?: StateMachine;
  snapshotEvery?: number;
  /** Called with each message as n1 sends it (after it is recorded in `sent`). */
  onSend?: (m: Message) => void;
  /** The transport's `flushNow`, when the test watches for it. */
  onFlushNow?: () => void;
}

export async function startCapturedLeader(opts: CapturedLeaderOptions = {}): Promise<CapturedLeader> {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-captured-leader-'));
  const clock = { now: 1_000 };
  const sent: Array<{ at: number; m: Message }> = [];
  let deliver: (m: Message) => void = () => {};
  let tick: () => void = () => {};
  const addr = { host: '127.0.0.1', port: 1 };
  const replica = await Replica.start(
    {
      id: 'n1',
      clusterId: 'c',
      members: { n1: addr, n2: addr, n3: addr },
      dataDir: dir,
      stateMachine: opts.stateMachine ?? { apply: () => {}, restore: () => {} },
      ...(opts.snapshotEvery !== undefined ? { snapshotEvery: opts.snapshotEvery } : {}),
      raft: { electionTimeoutMin: 400, electionTimeoutMax: 800, heartbeatInterval: 50 },
      clock: () => clock.now,
    },
    {
      transport: (onMessage) => {
        deliver = onMessage;
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
      timer: (fire) => {
        tick = fire;
        return { arm: () => {}, stop: () => {} };
      },
    },
  );
  const leader: CapturedLeader = {
    replica,
    sent,
    clock,
    deliver: (m) => deliver(m),
    tick: () => tick(),
    close: async () => {
      await replica.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await elect(leader);
  } catch (err) {
    await leader.close();
    throw err;
  }
  return leader;
}

/** Campaigns until n1 leads: a new cluster forms only once every member says it is blank. */
async function elect({ replica, sent, clock, deliver, tick }: CapturedLeader): Promise<void> {
  const campaign = async (): Promise<void> => {
    for (let i = 0; i < 200 && !sent.some((s) => s.m.type === 'vote' && s.m.pre); i++) {
      clock.now += 10;
      tick();
      await settle();
    }
  };
  // a blank claim counts as the answer to n1's current round of requests (core.ts, noteBlankPeer)
  const round = (): number | undefined => {
    const asked = sent.filter((s) => s.m.type === 'vote').at(-1)?.m;
    return asked?.type === 'vote' ? asked.blankRound : undefined;
  };
  const grant = (pre: boolean, term: number, from = 'n2'): Message => {
    const blankRound = round();
    return {
      type: 'vote-response',
      from,
      to: 'n1',
      term,
      pre,
      granted: true,
      blank: true,
      ...(blankRound !== undefined ? { blankRound } : {}),
    };
  };
  // the election timeout passes, n2 and n3 say they are blank (docs/production.md#blank-member),
  // then n1 campaigns for real: n2 grants the pre-vote, then the vote
  await campaign();
  deliver(grant(true, 1));
  deliver(grant(true, 1, 'n3'));
  await settle();
  sent.length = 0;
  await campaign();
  deliver(grant(true, 1));
  await settle();
  deliver(grant(false, 1));
  await settle();
  await settle();
  expect(replica.isLeader()).toBe(true);
}
