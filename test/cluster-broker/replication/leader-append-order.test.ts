/**
 * A leader sends a follower its appends in log order. An entry proposed from a continuation of
 * an apply (a federation link, or any client, answering a commit by proposing the next entry)
 * lands in the log after the Ready loop has handed the apply out but before the loop takes its
 * next Ready: that Ready then holds the entry's append, and a driver that sends a Ready's
 * messages only after its write would let the appends of later entries, which go out at once,
 * overtake it. The follower sees a gap, rejects, and the leader sends its pipeline again
 * (docs/federation.md#member-accounts). The real Replica on a captured transport and the real
 * file system.
 */
import { expect, it } from 'vitest';
import type { Replica } from '../../../src/cluster-broker/replication/replica.js';
import { acknowledge, lastAppendedTo, startCapturedLeader } from './captured-leader.js';

it("sends an entry proposed from an apply's continuation before its own write, not after", async () => {
  let replica: Replica | undefined;
  let first: number | undefined;
  /** Whether n2 had been sent the next entry once the microtasks after its proposal ran. */
  let sentBeforeIo: boolean | undefined;
  const leader = await startCapturedLeader({
    stateMachine: {
      apply: (entry) => {
        if (entry.index !== first) return;
        // what a link's `await commit` does: its continuation runs after the apply, as a microtask
        queueMicrotask(async () => {
          const next = replica!.append(new Uint8Array([2])).index;
          // microtasks only: the leader's write of the next entry (file system I/O) cannot end here
          for (let i = 0; i < 50; i++) await Promise.resolve();
          sentBeforeIo = lastAppendedTo(leader.sent, 'n2') >= next;
        });
      },
      restore: () => {},
    },
  });
  replica = leader.replica;
  try {
    first = replica.append(new Uint8Array([1])).index;
    // n2 acknowledges what it was sent until the first entry commits and is applied
    for (let j = 0; j < 400 && sentBeforeIo === undefined; j++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      leader.clock.now += 5;
      acknowledge(leader);
    }
    expect(sentBeforeIo).toBe(true);
  } finally {
    await leader.close();
  }
});
