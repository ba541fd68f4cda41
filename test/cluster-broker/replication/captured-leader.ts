/**
 * The real Replica as n1 of a 3-member cluster whose transport is captured (what it sends is
 * recorded, what it receives is handed in by the test), with a timer the test fires by hand and a
 * fake clock (captured-replica.ts), brought to leadership of a new cluster. For tests of what a
 * leader sends and when.
 */
import { expect } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import {
  type CapturedReplica,
  type CapturedReplicaOptions,
  settle,
  startCapturedReplica,
} from './captured-replica.js';

export { settle };

/** What a leader test uses of the captured replica, with its timer's `fire` named `tick`. */
export type CapturedLeader = Pick<CapturedReplica, 'replica' | 'sent' | 'clock' | 'deliver' | 'close'> & {
  tick(): void;
};

export type CapturedLeaderOptions = Omit<CapturedReplicaOptions, 'raft'>;

export async function startCapturedLeader(opts: CapturedLeaderOptions = {}): Promise<CapturedLeader> {
  const captured = await startCapturedReplica({
    ...opts,
    raft: { electionTimeoutMin: 400, electionTimeoutMax: 800, heartbeatInterval: 50 },
  });
  const leader: CapturedLeader = {
    replica: captured.replica,
    sent: captured.sent,
    clock: captured.clock,
    deliver: captured.deliver,
    tick: captured.fire,
    close: captured.close,
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
  // a blank claim counts as the answer to n1's current round of requests (raft/recovery.ts, noteBlankPeer)
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

/** The last log index the leader has sent `to` in its appends (0 before any). */
export function lastAppendedTo(sent: CapturedLeader['sent'], to: string): number {
  let last = 0;
  for (const { m } of sent)
    if (m.type === 'append' && m.to === to) last = Math.max(last, m.prevIndex + m.entries.length);
  return last;
}

/** `from` acknowledges every entry the leader has sent it so far, as a follower that holds them. */
export function acknowledge({ replica, sent, deliver }: CapturedLeader, from = 'n2'): void {
  deliver({
    type: 'append-response',
    from,
    to: 'n1',
    term: replica.term,
    success: true,
    matchIndex: lastAppendedTo(sent, from),
    rejectedPrev: 0,
    hintIndex: 0,
  });
}
