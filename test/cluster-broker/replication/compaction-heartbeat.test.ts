/**
 * A leader about to compact its log (a walk of the whole state on its event loop) sends its
 * followers heartbeats and writes them out first, so their election timers restart before it
 * blocks (docs/cluster-member.md#fresh-start: a fresh cluster's first compaction under load came
 * right before its only leader change). The real Replica on a captured transport, a manual ticker
 * and a fake clock.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Message, SnapshotData } from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

it('a leader heartbeats every follower and flushes before it compacts', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-compact-heartbeat-'));
  dirs.push(dir);
  let now = 1_000;
  const sent: Array<{ at: number; m: Message }> = [];
  const events: string[] = [];
  let deliver: (m: Message) => void = () => {};
  let tick: () => void = () => {};
  const addr = { host: '127.0.0.1', port: 1 };
  const replica = await Replica.start(
    {
      id: 'n1',
      clusterId: 'c',
      members: { n1: addr, n2: addr, n3: addr },
      dataDir: dir,
      stateMachine: {
        apply: () => {},
        restore: () => {},
        snapshot: () => {
          events.push('snapshot');
          return { parts: [new Uint8Array([1])] } as unknown as SnapshotData;
        },
      },
      snapshotEvery: 5,
      raft: { electionTimeoutMin: 400, electionTimeoutMax: 800, heartbeatInterval: 50 },
      clock: () => now,
    },
    {
      transport: (onMessage) => {
        deliver = onMessage;
        return {
          start: async () => 0,
          send: (m) => {
            sent.push({ at: now, m });
            events.push(`${m.type}:${m.to}`);
          },
          flushNow: () => events.push('flush'),
          close: async () => {},
        };
      },
      ticker: (t) => {
        tick = t;
        return () => {};
      },
    },
  );
  try {
    // campaign: the election timeout passes, n2 grants the pre-vote, then the vote
    for (let i = 0; i < 100 && !sent.some((s) => s.m.type === 'vote' && s.m.pre); i++) {
      now += 10;
      tick();
      await settle();
    }
    const grant = (pre: boolean, term: number, from = 'n2'): Message => ({
      type: 'vote-response',
      from,
      to: 'n1',
      term,
      pre,
      granted: true,
      blank: true,
    });
    // a new cluster forms only once every member says it is blank (docs/production.md#blank-member):
    // n2 and n3 say so, then n1 campaigns for real
    deliver(grant(true, 1));
    deliver(grant(true, 1, 'n3'));
    await settle();
    sent.length = 0;
    for (let i = 0; i < 200 && !sent.some((x) => x.m.type === 'vote' && x.m.pre); i++) {
      now += 10;
      tick();
      await settle();
    }
    deliver(grant(true, 1));
    await settle();
    deliver(grant(false, 1));
    await settle();
    await settle();
    expect(replica.isLeader()).toBe(true);
    // entries until a compaction is due (every 5), each acknowledged by n2 so they commit
    events.length = 0;
    const lastAppended = () =>
      Math.max(
        0,
        ...sent
          .filter((x) => x.m.type === 'append')
          .map((x) => {
            const ap = x.m as Extract<Message, { type: 'append' }>;
            return ap.prevIndex + ap.entries.length;
          }),
      );
    for (let i = 0; i < 8 && !events.includes('snapshot'); i++) {
      let committed = false;
      void replica.propose(new Uint8Array([i])).then(() => {
        committed = true;
      });
      // the leader's own write goes to the real file system: wait for it in small real steps
      for (let j = 0; j < 400 && !committed; j++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        now += 5;
        deliver({
          type: 'append-response',
          from: 'n2',
          to: 'n1',
          term: replica.term,
          success: true,
          matchIndex: lastAppended(),
          rejectedPrev: 0,
          hintIndex: 0,
        });
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
    await replica.close();
  }
});
