/**
 * Queue and topic federation between two single-node broker processes, each with its own
 * --data-dir: kill -9 mid-flow of the downstream broker and of the upstream broker, twice each,
 * each restarted on its store and port. The total-queue check over both brokers (for the topic:
 * over the downstream durable subscription): lost 0, duplicated 0, unexpected 0
 * (docs/federation.md#exactly-once). Process death only: fsync is covered by the store's
 * power-loss tests.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FederationLinkState } from '../../../../src/cluster-broker/federation/index.js';
import type { QueuesDocument } from '../../../../src/cluster-broker/http/index.js';
import { subscriptionQueue } from '../../../../src/cluster-broker/server/topic-attach.js';
import { type BrokerProcess, spawnBroker } from '../../../support/broker-process.js';
import {
  consumeInto,
  getJson,
  patientClient,
  publishIds,
  sendIds,
  TotalQueueCheck,
} from '../../../support/federation.js';
import { freePort, waitFor } from '../../../support/net.js';

const N = 600;
let dir = '';
const running = new Set<BrokerProcess>();

afterAll(async () => {
  for (const b of running)
    if (b.child.exitCode === null && b.child.signalCode === null) process.kill(b.pid, 'SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function start(args: string[]): Promise<BrokerProcess> {
  const b = await spawnBroker([...args, '--http-port', '0', '--host', '127.0.0.1'], 60_000);
  running.add(b);
  return b;
}

async function kill9(b: BrokerProcess): Promise<void> {
  process.kill(b.pid, 'SIGKILL');
  await b.exited;
  running.delete(b);
}

/** Messages in queue `name` (a subscription's queue included) at `b`, or -1 while it does not answer. */
async function depth(b: BrokerProcess, name = 'orders'): Promise<number> {
  try {
    const doc = await getJson<QueuesDocument>(b.httpPort!, '/api/queues');
    return doc.queues.find((q) => q.name === name)?.messages ?? 0;
  } catch {
    return -1;
  }
}

/** A fresh pair: upstream A and downstream B federating `what` from A, each with its store. */
async function pair(what: {
  queues?: string[];
  topics?: string[];
}): Promise<{ argsA: string[]; argsB: string[]; portA: number }> {
  dir = await mkdtemp(join(tmpdir(), 'quorate-federation-kill-'));
  const [portA, portB] = [await freePort(), await freePort()];
  const fed = join(dir, 'federation.json');
  await writeFile(
    fed,
    JSON.stringify({
      upstreams: [{ name: 'a', urls: [`amqp://127.0.0.1:${portA}`], ...what, reconnectDelayMs: 100 }],
    }),
  );
  const argsA = ['--port', String(portA), '--data-dir', join(dir, 'a'), '--cluster-id', 'A'];
  const argsB = [
    '--port',
    String(portB),
    '--data-dir',
    join(dir, 'b'),
    '--cluster-id',
    'B',
    '--federation',
    fed,
  ];
  return { argsA, argsB, portA };
}

/** B's links as its /api/federation reports them ([] while it does not answer). */
async function linksOf(b: BrokerProcess): Promise<FederationLinkState[]> {
  try {
    return (await getJson<{ links: FederationLinkState[] }>(b.httpPort!, '/api/federation')).links;
  } catch {
    return [];
  }
}

/**
 * kill -9 mid-flow, alternating sides (B, A, B, A, each restarted on its store and port) as the
 * consumer passes 100, 220, 340 and 460 messages: each kill catches moves between their two
 * commit points. Returns the brokers running after the last restart.
 */
async function killAlternately(
  check: TotalQueueCheck,
  brokers: { a: BrokerProcess; b: BrokerProcess },
  argsA: string[],
  argsB: string[],
): Promise<{ a: BrokerProcess; b: BrokerProcess }> {
  let { a, b } = brokers;
  for (const [at, side] of [
    [100, 'B'],
    [220, 'A'],
    [340, 'B'],
    [460, 'A'],
  ] as const) {
    await waitFor(() => check.seen >= at, { timeoutMs: 60_000, what: `${at} consumed` });
    if (side === 'A') {
      await kill9(a);
      a = await start(argsA);
    } else {
      await kill9(b);
      b = await start(argsB);
    }
  }
  return { a, b };
}

describe('federation under kill -9 (two processes)', () => {
  it('loses and duplicates nothing when either broker is killed mid-flow', async () => {
    const { argsA, argsB } = await pair({ queues: ['orders'] });
    const portA = Number(argsA[1]);
    const portB = Number(argsB[1]);
    let a = await start(argsA);
    let b = await start(argsB);
    const ids = Array.from({ length: N }, (_, i) => `m${i}`);
    await sendIds(`amqp://127.0.0.1:${portA}`, 'orders', ids);
    const check = new TotalQueueCheck(new Set(ids));

    const consumerConn = await patientClient(`amqp://127.0.0.1:${portB}`);
    const consumer = await consumerConn.openReceiver('orders', { credit: 100, dedup: false });
    const consuming = consumeInto(consumer, check);

    ({ a, b } = await killAlternately(check, { a, b }, argsA, argsB));
    // done when both queues are empty: everything moved, consumed and settled
    await waitFor(async () => (await depth(a)) === 0 && (await depth(b)) === 0, {
      timeoutMs: 90_000,
      what: 'both queues empty',
    });
    // the link may still be reconnecting after the last kill: it reports running once it is back
    await waitFor(async () => (await linksOf(b))[0]?.state === 'running', {
      timeoutMs: 60_000,
      what: 'the link running again',
    });
    expect(await linksOf(b)).toMatchObject([
      { upstream: 'a', queue: 'orders', state: 'running', upstreamClusterId: 'A' },
    ]);
    await consumer.close();
    await consuming;
    await consumerConn.close();
    expect(check.result()).toEqual({ lost: 0, duplicated: 0, unexpected: 0 });
    await kill9(a);
    await kill9(b);
    await rm(dir, { recursive: true, force: true });
  });

  it('a topic: every message reaches the downstream subscription once when either broker is killed mid-flow', {
    timeout: 180_000,
  }, async () => {
    const { argsA, argsB, portA } = await pair({ topics: ['prices'] });
    let a = await start(argsA);
    let b = await start(argsB);
    await waitFor(async () => (await linksOf(b))[0]?.state === 'running', {
      timeoutMs: 30_000,
      what: 'link running',
    });
    const consumerConn = await patientClient(`amqp://127.0.0.1:${argsB[1]}`);
    const consumer = await consumerConn.openReceiver('prices', {
      topic: true,
      durable: true,
      subscription: 'archive',
      credit: 100,
      dedup: false,
    });
    // the link's upstream subscription exists (running): all of these are kept for it, on A's store
    const ids = Array.from({ length: N }, (_, i) => `t${i}`);
    await publishIds(`amqp://127.0.0.1:${portA}`, 'prices', ids);
    const check = new TotalQueueCheck(new Set(ids));
    const consuming = consumeInto(consumer, check);
    ({ a, b } = await killAlternately(check, { a, b }, argsA, argsB));
    const upstreamSub = subscriptionQueue('quorate-federation/B/a/prices', 'federation/B/prices');
    const localSub = subscriptionQueue(consumerConn.containerId, 'archive');
    await waitFor(
      async () => (await depth(a, upstreamSub)) === 0 && (await depth(b, localSub)) === 0 && check.seen === N,
      {
        timeoutMs: 90_000,
        what: 'both subscriptions empty, everything consumed',
      },
    );
    // the last kill may have come after the last move: the link may still be reconnecting
    await waitFor(async () => (await linksOf(b))[0]?.state === 'running', {
      timeoutMs: 30_000,
      what: 'link running',
    });
    expect(await linksOf(b)).toMatchObject([
      { upstream: 'a', kind: 'topic', queue: 'prices', state: 'running' },
    ]);
    await consumer.close();
    await consuming;
    await consumerConn.close();
    expect(check.result()).toEqual({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
