/**
 * A leader about to compact its log (a walk of the whole state on its event loop) sends its
 * followers heartbeats and writes them out first, so their election timers restart before it
 * blocks (docs/cluster-member.md#fresh-start: a fresh cluster's first compaction under load came
 * right before its only leader change). The real Replica on a captured transport, a timer fired
 * by hand and a fake clock.
 */
import { expect, it } from 'vitest';
import type { SnapshotData } from '../../../src/cluster-broker/replication/raft/types.js';
import { acknowledge, startCapturedLeader } from './captured-leader.js';

it('a leader heartbeats every follower and flushes before it compacts', async () => {
  const events: string[] = [];
  const leader = await startCapturedLeader({
    stateMachine: {
      apply: () => {},
      restore: () => {},
      snapshot: () => {
        events.push('snapshot');
        return { parts: [new Uint8Array([1])] } as unknown as SnapshotData;
      },
    },
    snapshotEvery: 5,
    onSend: (m) => events.push(`${m.type}:${m.to}`),
    onFlushNow: () => events.push('flush'),
  });
  try {
    // entries until a compaction is due (every 5), each acknowledged by n2 so they commit
    events.length = 0;
    for (let i = 0; i < 8 && !events.includes('snapshot'); i++) {
      let committed = false;
      void leader.replica.propose(new Uint8Array([i])).then(() => {
        committed = true;
      });
      // the leader's own write goes to the real file system: wait for it in small real steps
      for (let j = 0; j < 400 && !committed; j++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        leader.clock.now += 5;
        acknowledge(leader);
      }
      expect(committed).toBe(true);
    }
    const at = events.indexOf('snapshot');
    expect(at).toBeGreaterThan(0);
    // right before the snapshot: a heartbeat to each follower, then the flush
    const before = events.slice(0, at);
    const lastFlush = before.lastIndexOf('flush');
    expect(lastFlush).toBe(before.length - 1);
    const justBefore = before.slice(0, lastFlush).slice(-2).sort();
    expect(justBefore).toEqual(['heartbeat:n2', 'heartbeat:n3']);
  } finally {
    await leader.close();
  }
});
