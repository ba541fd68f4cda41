/**
 * Issue 6.6, the reference cluster: kill -9 of the member the client is using while sends are in
 * flight (fixed kill point: after 150 acknowledged sends). Every send resolves accepted; the
 * queue holds each message exactly once (the broker deduplicates the re-sent in-doubt deliveries:
 * drained with a receiver whose own dedup is off, so it counts raw deliveries); a receiver on the
 * failing-over connection hands its application every message exactly once, through the async
 * iterator (queue b) and through batch receives (queue c); the events carry their fields.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../src/broker.js';
import { type Connection, type ConnectionEvents, connect } from '../../../src/index.js';
import { QuorateTarget, waitClusterServing } from '../../chaos/quorate-target.js';
import { countBatches, countDeliveries, sendWindowed } from '../../support/failover-load.js';
import { waitFor } from '../../support/net.js';

const N = 400;
const KILL_AFTER_ACKS = 150;
const WINDOW = 50;

let target: QuorateTarget;
let cluster: ClusterHandle;
const conns: Connection[] = [];

beforeAll(async () => {
  target = await QuorateTarget.start({ nodes: 3, autoRestart: false });
  cluster = target.cluster;
});

afterAll(async () => {
  for (const c of conns) await c.close({ timeoutMs: 2_000 }).catch(() => undefined);
  await target?.stop();
});

it('kill -9 of the member in use, sends in flight: nothing lost, nothing duplicated in the queue or to the application', async () => {
  const conn = await connect({
    urls: cluster.urls,
    containerId: 'failover-cluster-test',
    idleTimeoutMs: 2_000,
  });
  conns.push(conn);
  const failovers: ConnectionEvents['failover'][0][] = [];
  const disconnects: ConnectionEvents['disconnected'][0][] = [];
  const reconnects: ConnectionEvents['reconnecting'][0][] = [];
  const inDoubt: ConnectionEvents['inDoubt'][0][] = [];
  conn.on('failover', (e) => failovers.push(e));
  conn.on('disconnected', (e) => disconnects.push(e));
  conn.on('reconnecting', (e) => reconnects.push(e));
  conn.on('inDoubt', (e) => inDoubt.push(e));

  // queue A: drained afterwards to count raw copies; queues B and C: consumed live through the kill
  const senderA = await conn.openSender('failover-cluster-a');
  const senderB = await conn.openSender('failover-cluster-b');
  const senderC = await conn.openSender('failover-cluster-c');
  const live = countDeliveries(await conn.openReceiver('failover-cluster-b', { credit: 50 }));
  const liveBatches = countBatches(await conn.openReceiver('failover-cluster-c', { credit: 50 }));

  const usedUrl = conn.url!;
  const victim = target.memberOfUrl(usedUrl)!;
  expect(victim).toBeDefined();

  let acked = 0;
  let killed: Promise<void> | undefined;
  const outcomes = await sendWindowed(N, WINDOW, (i) =>
    (
      [
        [senderA, 'a'],
        [senderB, 'b'],
        [senderC, 'c'],
      ] as const
    ).map(([sender, q]) =>
      sender.send({ messageId: `${q}-${i}`, durable: true, body: i }, { timeoutMs: 60_000 }).then((r) => {
        if (q === 'a' && ++acked === KILL_AFTER_ACKS) killed = cluster.kill(victim);
        return r;
      }),
    ),
  );
  await killed;
  const rejected = outcomes.filter((o) => o.status === 'rejected');
  expect(rejected).toEqual([]);
  for (const o of outcomes)
    expect((o as PromiseFulfilledResult<{ state: string }>).value.state).toBe('accepted');

  // the failover moved us off the killed member, with every field of the event
  expect(failovers.length).toBeGreaterThanOrEqual(1);
  const f = failovers[0]!;
  expect(f.from).toBe(usedUrl);
  expect(f.to).not.toBe(usedUrl);
  expect(cluster.urls).toContain(f.to);
  expect(typeof f.reason).toBe('string');
  expect(f.durationMs).toBeGreaterThanOrEqual(0);
  expect(f.resent).toBeGreaterThan(0); // sends were in flight at the kill
  expect(f.reattached).toBeGreaterThanOrEqual(5); // three senders and the two receivers
  expect(disconnects[0]?.url).toBe(usedUrl);
  expect(reconnects.length).toBeGreaterThanOrEqual(1);
  expect(reconnects[0]).toMatchObject({
    attempt: expect.any(Number),
    delayMs: expect.any(Number),
    url: expect.any(String),
  });
  expect(inDoubt.length).toBeGreaterThan(0);
  expect(inDoubt.every((e) => e.messageId !== undefined && typeof e.address === 'string')).toBe(true);

  // the live receiver (same connection, failed over too): every message once, none twice
  await waitFor(() => live.counts.size === N, {
    timeoutMs: 60_000,
    what: `all ${N} messages on queue b`,
    intervalMs: 20,
  });
  expect([...live.counts.values()].filter((n) => n > 1)).toEqual([]);
  await waitFor(() => liveBatches.counts.size === N, {
    timeoutMs: 60_000,
    what: `all ${N} messages on queue c`,
    intervalMs: 20,
  });
  expect([...liveBatches.counts.values()].filter((n) => n > 1)).toEqual([]);

  // queue a, drained raw (no receiver dedup): the broker enqueued each message exactly once
  const drainConn = await connect({ urls: cluster.urls.filter((u) => u !== usedUrl), idleTimeoutMs: 2_000 });
  conns.push(drainConn);
  const raw = countDeliveries(
    await drainConn.openReceiver('failover-cluster-a', { credit: 100, dedup: false }),
  );
  await waitFor(() => raw.counts.size === N, {
    timeoutMs: 60_000,
    what: `all ${N} messages on queue a`,
    intervalMs: 20,
  });
  const settledAt = Date.now();
  await waitFor(() => Date.now() - settledAt > 2_000, {
    timeoutMs: 5_000,
    what: 'a quiet period for late copies',
    intervalMs: 20,
  });
  expect(raw.counts.size).toBe(N);
  expect([...raw.counts.entries()].filter(([, n]) => n > 1)).toEqual([]);

  // the killed member comes back, catches up, serves again
  await cluster.restart(victim);
  expect(await waitClusterServing(cluster, 60_000)).toBe(true);
}, 240_000);
