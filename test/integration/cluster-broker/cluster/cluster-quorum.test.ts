/**
 * Quorum through deterministic partitions (the startCluster handle's proxies): a member cut off
 * from the majority closes its clients with amqp:connection:forced `not quorate` within 2 s,
 * answers new connections with Open (member list) + Close, while the majority goes on; after
 * heal it catches up and serves again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import {
  Collector,
  closeConn,
  open,
  openExpectingClose,
} from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  parseList,
  portOf,
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';

let handle: ClusterHandle;
let idleClosedAt = 0;

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
});

afterAll(async () => {
  await handle?.stop();
});

async function isolate(victimIsLeader: boolean): Promise<void> {
  const leader = await waitLeader(handle);
  const victim = victimIsLeader ? leader : handle.ids.find((x) => x !== leader)!;
  const others = handle.ids.filter((x) => x !== victim);
  const q = `q-part-${victim}-${victimIsLeader ? 'leader' : 'follower'}`;

  const client = await open(portOf(handle, victim));
  // an idle connection (nothing in flight): only the quorum watch can close it
  const idle = await open(portOf(handle, victim));
  void idle.closed.then(() => {
    idleClosedAt = Date.now();
  });
  const receiver = new Collector(client.conn, q);
  await sendVia(handle, victim, q, range('before', 5));
  await receiver.until(5);

  const cutAt = Date.now();
  handle.partition([[victim], others]);
  try {
    await whilePartitioned(victim, others, q, client, cutAt);
    const idleError = await idle.closed;
    expect(idleError?.condition).toBe('amqp:connection:forced');
    expect(idleError?.description).toContain('not quorate');
    expect(idleClosedAt - cutAt).toBeLessThan(2500);
  } finally {
    handle.heal();
  }
  await waitServing(handle, [victim]);
  const again = await open(portOf(handle, victim));
  try {
    // everything sent during the partition; the 'before' messages may come again too: their
    // accepts were in flight when the link was cut (in doubt: at-least-once, contract 9)
    const c = new Collector(again.conn, q);
    const during = range('during', 20);
    const deadline = Date.now() + 30_000;
    while (!during.every((b) => c.bodies.includes(b)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(c.bodies.filter((b) => b.startsWith('during')).sort()).toEqual([...during].sort());
    for (const b of c.bodies) expect(b.startsWith('during') || b.startsWith('before')).toBe(true);
  } finally {
    await closeConn(again.conn);
  }
}

async function whilePartitioned(
  victim: string,
  others: string[],
  q: string,
  client: Awaited<ReturnType<typeof open>>,
  cutAt: number,
): Promise<void> {
  const error = await client.closed;
  const closedAfter = Date.now() - cutAt;
  expect(error?.condition).toBe('amqp:connection:forced');
  expect(error?.description).toContain('not quorate');
  expect(closedAfter).toBeLessThan(2500); // 2 s promised; slack for a loaded 2-core machine

  // new connections: SASL, our Open with the member list, then Close at once
  const refused = await openExpectingClose(portOf(handle, victim));
  expect(refused.opened).toBe(true);
  expect(refused.error?.condition).toBe('amqp:connection:forced');
  expect(refused.error?.description).toContain('not quorate');
  const list = parseList(refused.properties?.['failover-server-list']);
  expect(list.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
  expect(list.find((m) => m.id === victim)?.quorate).toBe(false);

  // the majority goes on
  await waitLeader(handle, others);
  await waitServing(handle, others);
  const during = range('during', 20);
  await sendVia(handle, others[0]!, q, during);
}

describe('quorum in a 3-member cluster', () => {
  it('a follower cut off from the majority stops serving within 2 s and serves again after heal', async () => {
    await isolate(false);
  });

  it('the leader cut off from the majority does the same; the majority elects another', async () => {
    await isolate(true);
  });
});
