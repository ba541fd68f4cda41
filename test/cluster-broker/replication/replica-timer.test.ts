/**
 * The Replica's one timer (docs/cluster-member.md#raft-timer): aimed at the core's next deadline
 * (capped), moved on by the inputs, and a timer that fires far later than armed taken for a stall
 * of this process (the core pauses), not for the peers' silence. The real Replica on a captured
 * transport, a fake clock and a timer that records what it is armed for and fires by hand
 * (captured-replica.ts).
 */
import { afterEach, expect, it } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import type { Replica } from '../../../src/cluster-broker/replication/replica.js';
import { settle, startCapturedReplica } from './captured-replica.js';

interface Follower {
  replica: Replica;
  clock: { now: number };
  /** When the timer is armed to fire (fake ms), or undefined when it is not armed. */
  dueAt(): number | undefined;
  /** How many times it was armed. */
  arms(): number;
  /** The clock moves to `at` and the timer fires there (as late as that is). */
  fireAt(at: number): Promise<void>;
  deliver(m: Message): Promise<void>;
  peerLost(peer: string): Promise<void>;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

/**
 * n1 of a 3-member cluster, the core's default timing (election 150-300 ms, heartbeat 50 ms), its
 * random draws all 0: an election deadline 150 ms after the last contact, no jitter.
 */
async function startFollower(): Promise<Follower> {
  const c = await startCapturedReplica({ raft: { random: () => 0 } });
  open.push(c.close);
  return {
    replica: c.replica,
    clock: c.clock,
    dueAt: c.dueAt,
    arms: c.arms,
    fireAt: async (at) => {
      c.clock.now = at;
      c.fire();
      await settle();
    },
    deliver: async (m) => {
      c.deliver(m);
      await settle();
    },
    peerLost: async (peer) => {
      c.peerLost(peer);
      await settle();
    },
  };
}

const heartbeat = (): Message => ({ type: 'heartbeat', from: 'n2', to: 'n1', term: 1, commit: 0 });

/** It stood for election (its pre-vote requests go out once the Ready's write is done: later). */
const campaigned = (f: Follower): boolean => f.replica.role !== 'follower';

it('a follower that hears its leader never needs its timer: each heartbeat moves it on', async () => {
  const f = await startFollower();
  await f.deliver(heartbeat());
  expect(f.replica.leaderId).toBe('n2');
  for (let i = 0; i < 100; i++) {
    f.clock.now += 50;
    // the timer is always armed for later than now: it would not have fired yet
    expect(f.dueAt()).toBeGreaterThan(f.clock.now);
    await f.deliver(heartbeat());
  }
  expect(campaigned(f)).toBe(false);
  // armed again once per heartbeat at most (timeoutTimer restarts the same timer then)
  expect(f.arms()).toBeLessThanOrEqual(101);
});

it('sleeps until its election deadline, 100 ms at most, and campaigns when it fires then', async () => {
  const f = await startFollower();
  const start = f.clock.now;
  let wakes = 0;
  for (; wakes < 10 && !campaigned(f); wakes++) {
    const due = f.dueAt()!;
    expect(due - f.clock.now).toBeLessThanOrEqual(101);
    await f.fireAt(due);
  }
  expect(campaigned(f)).toBe(true);
  // the election timeout (150 ms here) and a ms of rounding: two wake-ups (the cap, then the deadline)
  expect(f.clock.now - start).toBe(151);
  expect(wakes).toBe(2);
});

it('a timer that fires far later than armed is a stall of this process: its leader is not blamed', async () => {
  const f = await startFollower();
  await f.deliver(heartbeat());
  // idle: the timer wakes at the cap (100 ms) and sleeps again until the election deadline (150)
  await f.fireAt(f.dueAt()!);
  expect(f.dueAt()! - f.clock.now).toBe(50);
  // the process is stopped for two seconds (SIGSTOP, a long GC) and the timer fires that late: the
  // stall counts from its last wake-up, not from the deadline (the 50 ms before it are in it too)
  await f.fireAt(f.dueAt()! + 2_000);
  expect(campaigned(f)).toBe(false);
  expect(f.replica.isQuorate()).toBe(true);
  // the heartbeats that waited in the socket meanwhile are read next
  await f.deliver(heartbeat());
  expect(campaigned(f)).toBe(false);
  // while a leader that really went silent is found out after an election timeout as ever
  for (let i = 0; i < 10 && !campaigned(f); i++) await f.fireAt(f.dueAt()!);
  expect(campaigned(f)).toBe(true);
});

it("the leader's connection closing brings the timer forward to the sooner campaign", async () => {
  const f = await startFollower();
  await f.deliver(heartbeat());
  const lost = f.clock.now;
  await f.peerLost('n2');
  // leaderLostDelay 10 ms + its rank among the survivors x 40 ms (+ jitter), not the old deadline
  expect(f.dueAt()! - lost).toBeLessThanOrEqual(10 + 40 * 1.5 + 2);
  await f.fireAt(f.dueAt()!);
  expect(campaigned(f)).toBe(true);
});

it("tells 'quorate' when the leader's contact lapses, not a tick later", async () => {
  const f = await startFollower();
  const events: Array<{ q: boolean; at: number }> = [];
  f.replica.on('quorate', (q) => events.push({ q, at: f.clock.now }));
  await f.deliver(heartbeat());
  const contact = f.clock.now;
  expect(events).toEqual([{ q: true, at: contact }]);
  for (let i = 0; i < 10 && events.length < 2; i++) await f.fireAt(f.dueAt()!);
  // quorate ends 300 ms (the max election timeout) after the last contact, or sooner when the
  // election deadline comes first and the member campaigns
  expect(events[1]?.q).toBe(false);
  expect(events[1]!.at - contact).toBeLessThanOrEqual(300 + 1);
});
