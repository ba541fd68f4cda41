/**
 * Issue 6.6, RabbitMQ: a 3-node RabbitMQ 3.10 cluster with a quorum queue (declared over AMQP
 * 0-9-1, addressed as /amq/queue/NAME). The client is configured with the three URLs (RabbitMQ
 * sends no member list) in a fixed order, so it connects to the node that leads the queue. Fixed
 * kill point: after 100 acknowledged sends that node is SIGKILLed, so the client loses the node
 * it uses and the queue loses its leader at once; it reconnects to another node during the
 * election (where RabbitMQ's AMQP 1.0 session may crash and reset the connection, CONTRIBUTING.md#rabbitmq).
 * Every send resolves accepted (at-least-once into the queue: re-sent in-doubt deliveries may be
 * enqueued twice), and the receiver on the same connection hands its application every message
 * exactly once (receiver dedup).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Connection, type ConnectionEvents, connect, type SendResult } from '../../../src/index.js';
import {
  countDeliveries,
  declareQuorumQueue,
  quorumQueueLeader,
  sendWindowed,
} from '../../support/failover-load.js';
import { waitFor } from '../../support/net.js';
import { type RabbitCluster, startRabbit } from '../../support/rabbitmq.js';

const QUEUE = 'failover-rmq';
const N = 300;
const KILL_AFTER_ACKS = 100;
const WINDOW = 20;

let rabbit: RabbitCluster;
const conns: Connection[] = [];

beforeAll(async () => {
  rabbit = await startRabbit(3);
  await declareQuorumQueue(rabbit, QUEUE);
}, 240_000);

afterAll(async () => {
  for (const c of conns) await c.close({ timeoutMs: 2_000 }).catch(() => undefined);
  await rabbit?.stop();
}, 120_000);

it('kill -9 of the node in use (the queue leader): at-least-once into the queue, exactly once to the application', async () => {
  const leaderName = await quorumQueueLeader(rabbit, QUEUE);
  const leader = rabbit.nodes.find((n) => n.name === leaderName)!;
  const urls = [leader.url, ...rabbit.nodes.filter((n) => n !== leader).map((n) => n.url)];
  const conn = await connect({
    urls,
    randomizeMembers: false,
    containerId: 'failover-rabbitmq-test',
    idleTimeoutMs: 2_000,
    reconnect: { maxTimeMs: 120_000, maxDelayMs: 1_000 },
  });
  conns.push(conn);
  const failovers: ConnectionEvents['failover'][0][] = [];
  conn.on('failover', (e) => failovers.push(e));
  expect(conn.url).toContain(`:${leader.amqpPort}`);

  const address = `/amq/queue/${QUEUE}`;
  const receiver = await conn.openReceiver(address, { credit: 50 });
  const { counts, done: consumed } = countDeliveries(receiver);
  const sender = await conn.openSender(address);

  let acked = 0;
  let killed: Promise<void> | undefined;
  const outcomes = await sendWindowed(N, WINDOW, (i) => [
    sender.send({ messageId: `rmq-${i}`, durable: true, body: i }, { timeoutMs: 90_000 }).then((r) => {
      if (++acked === KILL_AFTER_ACKS) killed = leader.kill();
      return r;
    }),
  ]);
  await killed;
  expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  for (const o of outcomes) expect((o as PromiseFulfilledResult<SendResult>).value.state).toBe('accepted');

  expect(failovers.length).toBeGreaterThanOrEqual(1);
  expect(failovers[0]!.from).toBe(leader.url.replace('guest:guest@', ''));
  expect(failovers.at(-1)!.to).not.toContain(`:${leader.amqpPort}`);

  // every acknowledged message reaches the application, none twice
  await waitFor(() => counts.size === N, {
    timeoutMs: 90_000,
    what: `all ${N} messages handed out`,
    intervalMs: 20,
  });
  const settledAt = Date.now();
  await waitFor(() => Date.now() - settledAt > 2_000, {
    timeoutMs: 5_000,
    what: 'a quiet period for late copies',
    intervalMs: 20,
  });
  expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
  // informational: how many raw redeliveries/duplicate copies the receiver absorbed
  console.info(
    `rabbitmq failover: ${failovers.length} failover(s), ${receiver.duplicatesSuppressed} duplicate(s) suppressed by receiver dedup`,
  );
  await receiver.close().catch(() => undefined);
  await consumed;
}, 300_000);
