/**
 * Real kill -9 of cluster members (startCluster handle): acknowledged messages survive the loss
 * of the leader and of a follower, a new leader takes writes, a restarted member catches up and
 * serves what was sent while it was down, and the $cluster/membership feed follows it all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  type ListedMember,
  parseList,
  portOf,
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';

let handle: ClusterHandle;

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
});

afterAll(async () => {
  await handle?.stop();
});

async function drain(id: string, address: string, n: number): Promise<string[]> {
  const o = await open(portOf(handle, id));
  try {
    const c = new Collector(o.conn, address);
    await c.until(n, 30_000);
    // nothing more than expected is there: the member answers a drain only after sending what
    // it has for the credit, so a copy too many has arrived by then
    await c.drain(0);
    return c.bodies;
  } finally {
    await closeConn(o.conn);
  }
}

async function killAndRecover(victimIsLeader: boolean): Promise<void> {
  const leader = await waitLeader(handle);
  const victim = victimIsLeader ? leader : handle.ids.find((x) => x !== leader)!;
  const others = handle.ids.filter((x) => x !== victim);
  const q = `q-kill-${victim}-${victimIsLeader ? 'leader' : 'follower'}`;
  const before = [...range('via-victim', 40), ...range('via-other', 40)];
  await sendVia(handle, victim, q, before.slice(0, 40));
  await sendVia(handle, others[0]!, q, before.slice(40));

  await handle.kill(victim);
  const during = range('while-down', 40);
  try {
    await waitLeader(handle, others);
    await waitServing(handle, others);
    await sendVia(handle, others[1]!, q, during);
  } finally {
    await handle.restart(victim);
  }
  await waitServing(handle);
  // the restarted member caught up: it serves everything acknowledged, once
  const got = await drain(victim, q, 120);
  expect(got.length).toBe(120);
  expect(new Set(got)).toEqual(new Set([...before, ...during]));
}

describe('kill -9 in a 3-member cluster', () => {
  it('of the leader: every acknowledged message is still there, a new leader takes writes', async () => {
    await killAndRecover(true);
  });

  it('of a follower: every acknowledged message is still there', async () => {
    await killAndRecover(false);
  });

  it('the membership feed shows a killed member down and a restarted one back', async () => {
    const leader = await waitLeader(handle);
    const watcher = leader;
    const victim = handle.ids.find((x) => x !== leader)!;
    const o = await open(portOf(handle, watcher));
    const lists: ListedMember[][] = [];
    try {
      const feed = new Collector(o.conn, '$cluster/membership');
      const seen = (pred: (l: ListedMember[]) => boolean): Promise<void> =>
        new Promise((resolve, reject) => {
          const t = setTimeout(
            () => reject(new Error(`feed never showed it: ${JSON.stringify(lists.at(-1))}`)),
            30_000,
          );
          const check = (): void => {
            while (lists.length < feed.bodies.length)
              lists.push(parseList(JSON.parse(feed.bodies[lists.length]!)));
            if (lists.some(pred)) {
              clearTimeout(t);
              resolve();
            } else setTimeout(check, 50);
          };
          check();
        });
      const state = (l: ListedMember[]): boolean | undefined => l.find((m) => m.id === victim)?.quorate;
      await seen((l) => state(l) === true);
      const n = feed.bodies.length;
      await handle.kill(victim);
      await seen((l) => lists.indexOf(l) >= n - 1 && state(l) === false);
      const m = feed.bodies.length;
      await handle.restart(victim);
      await seen((l) => lists.indexOf(l) >= m && state(l) === true);
      // every message is the full list
      for (const l of lists) expect(l.map((x) => x.id)).toEqual(['n1', 'n2', 'n3']);
    } finally {
      await closeConn(o.conn);
    }
  });

  it('messages held by consumers of a killed member become available to others (consumer lease)', async () => {
    await waitServing(handle); // the member restarted by the previous test may still be catching up
    const leader = await waitLeader(handle);
    const victim = handle.ids.find((x) => x !== leader)!;
    const other = handle.ids.find((x) => x !== leader && x !== victim)!;
    const sent = range('held', 10);
    await sendVia(handle, leader, 'q-lease', sent);
    // a consumer on the victim takes them all and never settles them
    const v = await open(portOf(handle, victim));
    const holder = new Collector(v.conn, 'q-lease', { exactly: 10, settle: false });
    await holder.until(10);
    await handle.kill(victim);
    try {
      const o = await open(portOf(handle, other));
      try {
        const c = new Collector(o.conn, 'q-lease');
        await c.until(10, 30_000); // the leader releases them after the 5 s lease
        expect(new Set(c.bodies)).toEqual(new Set(sent));
      } finally {
        await closeConn(o.conn);
      }
    } finally {
      await handle.restart(victim);
      await waitServing(handle);
    }
  });
});
