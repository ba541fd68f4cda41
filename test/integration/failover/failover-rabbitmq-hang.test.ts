/**
 * Issue 37 part 4, RabbitMQ: a 3-node RabbitMQ 3.10 cluster with a quorum queue; the node the
 * client uses (the queue's leader) is SIGSTOPped mid-stream, not killed. RabbitMQ's AMQP 1.0
 * plugin does not answer a session flow with `echo`, so the client probes it with a Begin of a
 * session of its own, which a running node answers (docs/failover.md#unresponsive). Default options
 * (the 10 s idle timeout included): the client leaves the stopped node with reason
 * 'unresponsive' well before its idle timeout, never fails a running node over before the stop,
 * and the application sees every acknowledged message once. The node is resumed (SIGCONT) and
 * every node stopped by PID.
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
import { type RabbitCluster, type RabbitNode, startRabbit } from '../../support/rabbitmq.js';

const QUEUE = 'failover-rmq-hang';
const N = 300;
const STOP_AFTER_ACKS = 100;
const WINDOW = 20;
/**
 * Unresponsive failovers from running nodes after the first (goal 0): a margin for a loaded
 * machine, far under the one every 1-2 s that the election caused before the Begin probe.
 */
const MAX_NEEDLESS_FAILOVERS = 5;
/** The client's default idle timeout: what it waited before it suspected silence. */
const IDLE_TIMEOUT_MS = 10_000;

let rabbit: RabbitCluster;
let stopped: RabbitNode | undefined;
const conns: Connection[] = [];

beforeAll(async () => {
  rabbit = await startRabbit(3);
  await declareQuorumQueue(rabbit, QUEUE);
}, 240_000);

afterAll(async () => {
  if (stopped) process.kill(stopped.pid(), 'SIGCONT');
  for (const c of conns) await c.close({ timeoutMs: 2_000 }).catch(() => undefined);
  await rabbit?.stop();
}, 120_000);

it('SIGSTOP of the node in use: unresponsive failover before the idle timeout, every acknowledged message once', async () => {
  const leaderName = await quorumQueueLeader(rabbit, QUEUE);
  const leader = rabbit.nodes.find((n) => n.name === leaderName)!;
  const urls = [leader.url, ...rabbit.nodes.filter((n) => n !== leader).map((n) => n.url)];
  const conn = await connect({
    urls,
    randomizeMembers: false,
    containerId: 'failover-rabbitmq-hang-test',
    reconnect: { maxTimeMs: 120_000, maxDelayMs: 1_000 },
  });
  conns.push(conn);
  const failovers: (ConnectionEvents['failover'][0] & { at: number })[] = [];
  conn.on('failover', (e) => failovers.push({ ...e, at: performance.now() }));
  expect(conn.url).toContain(`:${leader.amqpPort}`);

  const address = `/amq/queue/${QUEUE}`;
  const receiver = await conn.openReceiver(address, { credit: 50 });
  const { counts, done: consumed } = countDeliveries(receiver);
  const sender = await conn.openSender(address);

  let acked = 0;
  let stoppedAt = Number.NaN;
  let failoversBeforeStop = -1;
  const outcomes = await sendWindowed(N, WINDOW, (i) => [
    sender.send({ messageId: `rmq-hang-${i}`, durable: true, body: i }, { timeoutMs: 90_000 }).then((r) => {
      if (++acked === STOP_AFTER_ACKS) {
        failoversBeforeStop = failovers.length;
        stopped = leader;
        process.kill(leader.pid(), 'SIGSTOP');
        stoppedAt = performance.now();
      }
      return r;
    }),
  ]);
  expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  for (const o of outcomes) expect((o as PromiseFulfilledResult<SendResult>).value.state).toBe('accepted');

  // a running RabbitMQ (it never answers a probe) was not failed over before the stop
  expect(failoversBeforeStop).toBe(0);
  const first = failovers[0]!;
  expect(first.reason).toBe('unresponsive');
  expect(first.from).toBe(leader.url.replace('guest:guest@', ''));
  expect(first.to).not.toContain(`:${leader.amqpPort}`);
  // left on suspicion, not on the idle timeout
  const lostAfterMs = first.at - first.durationMs - stoppedAt;
  expect(lostAfterMs).toBeLessThan(IDLE_TIMEOUT_MS);
  // the running nodes answer the Begin probe while the quorum queue elects a leader for tens of
  // seconds and settles nothing: they are not failed over again and again (40 failovers in one
  // run without that probe, 2 with it)
  const needless = failovers.slice(1).filter((f) => f.reason === 'unresponsive');
  expect(needless.length).toBeLessThanOrEqual(MAX_NEEDLESS_FAILOVERS);

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
  console.info(
    `rabbitmq hang: connection given up ${Math.round(lostAfterMs)} ms after SIGSTOP, ${failovers.length} failover(s) ` +
      `(${failovers.map((f) => `${f.reason?.slice(0, 60)} after ${Math.round(f.at - stoppedAt)} ms`).join('; ')}), ` +
      `${receiver.duplicatesSuppressed} duplicate(s) suppressed by receiver dedup`,
  );
  process.kill(leader.pid(), 'SIGCONT');
  stopped = undefined;
  await receiver.close().catch(() => undefined);
  await consumed;
}, 300_000);
