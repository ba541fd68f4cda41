/**
 * Management over AMQP on a 3-member cluster (docs/management.md): a queue declared through one
 * member is seen, purged and deleted through the others, a follower answers requests (its
 * changes go through the leader like any broker event), a restart of every member keeps what
 * management did; and the per-queue delivery limit (docs/broker-features.md#delivery-limit)
 * dead-letters a message after N failed deliveries, also when one of them was a consumer on a
 * member that was killed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { type Connection, connect, type Management, type Receiver } from '../../../../src/index.js';
import {
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { waitFor } from '../../../support/net.js';

const REQUEST = { timeoutMs: 15_000 };
let handle: ClusterHandle;
const conns: Connection[] = [];

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
});

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
});

afterAll(async () => {
  await handle?.stop();
});

/** A client of member `id` only (no failover: the test says which member answers). */
async function client(id: string): Promise<Connection> {
  const c = await connect({ urls: [handle.urls[handle.ids.indexOf(id)]!], reconnect: false });
  conns.push(c);
  return c;
}

async function managementOf(id: string): Promise<Management> {
  return (await client(id)).management(REQUEST);
}

/** The leader, and the two followers (A and B of the tests: followers forward to the leader). */
async function roles(): Promise<{ leader: string; a: string; b: string }> {
  const leader = await waitLeader(handle);
  const [a, b] = handle.ids.filter((id) => id !== leader);
  return { leader, a: a!, b: b! };
}

/**
 * A receiver on member `id` granted credit for one message only: once it settles that one, the
 * broker cannot hand it another (a redelivery to a receiver being closed would count as a lost
 * delivery, docs/broker-features.md#delivery-limit).
 */
async function receiverOfOne(id: string, queue: string): Promise<Receiver> {
  const r = await (await client(id)).openReceiver(queue, { credit: 0 });
  r.addCredit(1);
  return r;
}

/** `queue`'s one message is in `<queue>.dlq` (read through member `id`) after `count` deliveries. */
async function expectDeadLettered(id: string, m: Management, queue: string, count: number): Promise<void> {
  const dlq = await (await client(id)).openReceiver(`${queue}.dlq`, { credit: 1 });
  const dead = await dlq.receive(REQUEST);
  expect(dead.message.body).toBe('poison');
  expect(dead.message.deliveryCount).toBe(count);
  await dead.accept();
  await countSeen(m, queue, 0);
}

async function sendN(conn: Connection, address: string, bodies: unknown[]): Promise<void> {
  const s = await conn.openSender(address);
  for (const body of bodies) expect((await s.send({ body }, REQUEST)).state).toBe('accepted');
  await s.close();
}

/** What member `m` says of `queue`'s count, once it has applied as far as `want`. */
async function countSeen(m: Management, queue: string, want: number): Promise<void> {
  let last: number | undefined;
  await waitFor(
    async () => {
      last = (await m.getQueue(queue, REQUEST)).messageCount;
      return last === want;
    },
    { timeoutMs: 15_000, what: `${queue} at ${want} messages (last seen ${String(last)})` },
  );
}

/** Waits until member `m` knows `queue` (a member serves reads from the state it has applied). */
async function known(m: Management, queue: string): Promise<void> {
  await waitFor(async () => (await m.listQueues(REQUEST)).some((q) => q.name === queue), {
    timeoutMs: 15_000,
    what: `${queue} listed`,
  });
}

describe('management over AMQP, 3-member cluster', () => {
  it('declare through A, get and list through B, purge through B, count through C, delete; a restart keeps it', async () => {
    const { leader, a, b } = await roles();
    const mA = await managementOf(a);
    const mB = await managementOf(b);
    const mC = await managementOf(leader);

    const declared = await mA.declareQueue('mc-orders', { maxLength: 5, deliveryLimit: 3 }, REQUEST);
    expect(declared).toMatchObject({ name: 'mc-orders', durable: true, type: 'quorum', messageCount: 0 });
    await known(mB, 'mc-orders');
    const onB = await mB.getQueue('mc-orders', REQUEST);
    expect(onB.arguments).toMatchObject({ 'x-max-length': 5, 'x-delivery-limit': 3 });
    // a follower checks a declare against what was declared through another member
    expect((await mB.declareQueue('mc-orders', { maxLength: 5 }, REQUEST)).name).toBe('mc-orders');
    await expect(mB.declareQueue('mc-orders', { maxLength: 6 }, REQUEST)).rejects.toMatchObject({
      status: 409,
    });

    // the max length declared through A holds for a sender on C (once C applied the declare:
    // each member applies committed entries on its own, none waits for the others)
    await known(mC, 'mc-orders');
    const onC = await client(leader);
    await sendN(onC, 'mc-orders', [0, 1, 2, 3, 4]);
    const s = await onC.openSender('mc-orders');
    await expect(s.send({ body: 'sixth' }, REQUEST)).rejects.toMatchObject({
      outcome: { state: 'rejected', error: { condition: 'amqp:resource-limit-exceeded' } },
    });
    await s.close();

    await countSeen(mB, 'mc-orders', 5);
    expect(await mB.purgeQueue('mc-orders', REQUEST)).toBe(5);
    // B's purge answered: it is committed, and every member applies it (the leader usually
    // first, but its apply can trail a follower's while it waits on its own disk)
    await countSeen(mC, 'mc-orders', 0);
    await countSeen(mA, 'mc-orders', 0);
    await sendN(onC, 'mc-orders', ['after-purge-1', 'after-purge-2']);

    await mA.declareQueue('mc-gone', {}, REQUEST);
    await sendN(await client(a), 'mc-gone', ['x']);
    await known(mB, 'mc-gone');
    await countSeen(mB, 'mc-gone', 1);
    expect(await mB.deleteQueue('mc-gone', REQUEST)).toBe(1);
    await waitFor(async () => !(await mC.listQueues(REQUEST)).some((q) => q.name === 'mc-gone'), {
      timeoutMs: 15_000,
      what: 'mc-gone gone on C',
    });
    await expect(mC.getQueue('mc-gone', REQUEST)).rejects.toMatchObject({ status: 404 });
    await waitFor(async () => !(await mA.listQueues(REQUEST)).some((q) => q.name === 'mc-gone'), {
      timeoutMs: 15_000,
      what: 'mc-gone gone on A',
    });

    for (const c of conns.splice(0)) await c.close().catch(() => undefined);
    await Promise.all(handle.ids.map((id) => handle.kill(id)));
    await Promise.all(handle.ids.map((id) => handle.restart(id)));
    await waitServing(handle);

    for (const id of handle.ids) {
      const m = await managementOf(id);
      await countSeen(m, 'mc-orders', 2);
      const q = await m.getQueue('mc-orders', REQUEST);
      expect(q.arguments).toMatchObject({ 'x-max-length': 5, 'x-delivery-limit': 3 });
      await expect(m.getQueue('mc-gone', REQUEST)).rejects.toMatchObject({ status: 404 });
    }
    const r = await (await client(handle.ids[0]!)).openReceiver('mc-orders', { credit: 2 });
    const bodies = [];
    for (let i = 0; i < 2; i++) {
      const d = await r.receive(REQUEST);
      bodies.push(d.message.body);
      await d.accept();
    }
    expect(bodies).toEqual(['after-purge-1', 'after-purge-2']);
  });

  it('a follower restarted after a purge and a delete it missed catches up', async () => {
    const { leader, a, b } = await roles();
    const mA = await managementOf(a);
    await mA.declareQueue('mc-missed', {}, REQUEST);
    await mA.declareQueue('mc-missed-del', {}, REQUEST);
    await sendN(await client(a), 'mc-missed', [1, 2, 3]);
    // b holds what it is about to miss the purge and the delete of (else the checks after its
    // restart would pass for a member that never had the messages or the queue)
    const mBefore = await managementOf(b);
    await countSeen(mBefore, 'mc-missed', 3);
    await known(mBefore, 'mc-missed-del');
    await handle.kill(b);
    expect(await mA.purgeQueue('mc-missed', REQUEST)).toBe(3);
    expect(await mA.deleteQueue('mc-missed-del', REQUEST)).toBe(0);
    await handle.restart(b);
    await waitServing(handle);
    const mB = await managementOf(b);
    await known(mB, 'mc-missed');
    await countSeen(mB, 'mc-missed', 0);
    await expect(mB.getQueue('mc-missed-del', REQUEST)).rejects.toMatchObject({ status: 404 });
    expect((await (await managementOf(leader)).getQueue('mc-missed', REQUEST)).messageCount).toBe(0);
  });

  it('per-queue delivery limit: N deliveries failed through different members go to <queue>.dlq', async () => {
    const { leader, a, b } = await roles();
    const mA = await managementOf(a);
    await mA.declareQueue('mc-poison', { deliveryLimit: 3 }, REQUEST);
    await sendN(await client(leader), 'mc-poison', ['poison']);
    for (const [i, id] of [a, b, leader].entries()) {
      const r = await receiverOfOne(id, 'mc-poison');
      const d = await r.receive(REQUEST);
      expect(d.message.body).toBe('poison');
      expect(d.message.deliveryCount ?? 0).toBe(i);
      await d.modify({ deliveryFailed: true });
      await r.close();
    }
    await expectDeadLettered(b, mA, 'mc-poison', 3);
  });

  it('per-queue delivery limit: a delivery lost with its killed member counts (delivery-count + 1)', async () => {
    const { leader, a, b } = await roles();
    const mA = await managementOf(a);
    await mA.declareQueue('mc-killed', { deliveryLimit: 3 }, REQUEST);
    await sendN(await client(leader), 'mc-killed', ['poison']);

    // 1: failed by its consumer on A
    const r1 = await receiverOfOne(a, 'mc-killed');
    const one = await r1.receive(REQUEST);
    expect(one.message.deliveryCount ?? 0).toBe(0);
    await one.modify({ deliveryFailed: true });
    await r1.close();

    // 2: held unsettled by a consumer on B, which is killed
    const r2 = await receiverOfOne(b, 'mc-killed');
    const two = await r2.receive(REQUEST);
    expect(two.message.deliveryCount).toBe(1);
    await handle.kill(b);

    // 3: the leader releases B's consumer after its lease: count 2; failed once more, it is dead
    const r3 = await receiverOfOne(leader, 'mc-killed');
    const three = await r3.receive({ timeoutMs: 60_000 });
    expect(three.message.body).toBe('poison');
    expect(three.message.deliveryCount).toBe(2);
    await three.modify({ deliveryFailed: true });

    await expectDeadLettered(a, mA, 'mc-killed', 3);

    await handle.restart(b);
    await waitServing(handle);
  });
});
