/**
 * A leader whose timers do not run (its event loop is working through one long round of I/O
 * callbacks) still sends its heartbeats once they are due, from the inputs it handles
 * (docs/cluster-member.md#fresh-start). The real Replica on a captured transport, a manual ticker
 * and a fake clock.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Message } from '../../../src/cluster-broker/replication/raft/types.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

it('a leader sends due heartbeats from its inputs when its ticks are late', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quorate-busy-leader-'));
  dirs.push(dir);
  let now = 1_000;
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
      stateMachine: { apply: () => {}, restore: () => {} },
      raft: { electionTimeoutMin: 400, electionTimeoutMax: 800, heartbeatInterval: 50 },
      clock: () => now,
    },
    {
      transport: (onMessage) => {
        deliver = onMessage;
        return { start: async () => 0, send: (m) => sent.push({ at: now, m }), close: async () => {} };
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
    now += 10;
    tick();
    await settle();
    // from here on no tick runs (a long round of I/O callbacks), but n2's answers keep coming in
    const lastTickAt = now;
    for (let i = 0; i < 30; i++) {
      now += 20;
      deliver({ type: 'heartbeat-response', from: 'n2', to: 'n1', term: replica.term });
      await settle();
    }
    // what keeps n3 from electing another after 400-800 ms: the leader's heartbeats (or appends),
    // sent from its inputs while no tick runs (other messages, e.g. a snapshot offer to a member
    // that never answered, may come too: they are not what this counts)
    const toN3 = sent.filter(
      (s) => s.m.to === 'n3' && s.at > lastTickAt + 50 && (s.m.type === 'heartbeat' || s.m.type === 'append'),
    );
    expect(toN3.length).toBeGreaterThanOrEqual(5);
  } finally {
    await replica.close();
  }
});
