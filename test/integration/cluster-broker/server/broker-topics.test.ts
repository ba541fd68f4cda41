/**
 * Topics on a single node (docs/topics.md), with our client: a publish reaches every
 * subscription that exists when it commits; durable subscriptions keep messages across detach,
 * reconnect and a broker restart (--data-dir) until unsubscribed; a re-sent publish reaches each
 * subscription once; a selector filters a subscription; a durable subscription's link stolen by
 * a successor (same container-id and name) leaves the subscription to it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerNode, startBroker } from '../../../../src/cluster-broker/assembly/index.js';
import { AmqpError, type Connection, connect, type Receiver } from '../../../../src/index.js';
import { waitFor } from '../../../support/net.js';

let broker: BrokerNode;
const conns: Connection[] = [];

beforeAll(async () => {
  broker = await startBroker({ port: 0 });
});
afterAll(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  await broker?.stop();
});

async function open(b: BrokerNode, containerId?: string): Promise<Connection> {
  const c = await connect({ urls: b.url, reconnect: false, ...(containerId ? { containerId } : {}) });
  conns.push(c);
  return c;
}

/** The next `n` bodies, each accepted. */
async function bodies(r: Receiver, n: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const d = await r.receive({ timeoutMs: 10_000 });
    out.push(d.message.body);
    await d.accept();
  }
  return out;
}

const depth = (b: BrokerNode, queue: string): number | undefined =>
  b.stats().queues.find((q) => q.name === queue)?.depth;
const subscriptionQueues = (b: BrokerNode, topic: string): string[] => b.backend.state.subscriptionsOf(topic);

describe('topics on a single node', () => {
  it('a publish goes to every subscription existing at commit; a later one gets only later messages', async () => {
    const conn = await open(broker);
    const subs = [
      await conn.openReceiver('fan', { topic: true }),
      await conn.openReceiver('fan', { topic: true }),
      await conn.openReceiver('fan', { topic: true }),
    ];
    const sender = await conn.openSender('fan', { topic: true });
    await sender.send({ body: 'one' });
    await sender.send({ body: 'two' });
    const late = await conn.openReceiver('fan', { topic: true });
    await sender.send({ body: 'three' });
    for (const s of subs) expect(await bodies(s, 3)).toEqual(['one', 'two', 'three']);
    expect(await bodies(late, 1)).toEqual(['three']);
    // a non-durable subscription ends with its link
    expect(subscriptionQueues(broker, 'fan')).toHaveLength(4);
    await late.close();
    await waitFor(() => subscriptionQueues(broker, 'fan').length === 3, {
      timeoutMs: 10_000,
      what: 'the closed subscription deleted',
    });
  });

  it('a durable subscription keeps its messages across detach and reconnect; unsubscribe ends it', async () => {
    const first = await open(broker, 'durable-client');
    const sub = await first.openReceiver('prices', { topic: true, durable: true, subscription: 'ticks' });
    expect(sub.name).toBe('ticks');
    await sub.close(); // detach, closed=false: the subscription stays
    await first.close();
    const pub = await open(broker);
    const sender = await pub.openSender('prices', { topic: true });
    for (const body of ['a', 'b', 'c']) await sender.send({ body });
    expect(subscriptionQueues(broker, 'prices')).toEqual(['$sub/durable-client/ticks']);

    const again = await open(broker, 'durable-client');
    const resumed = await again.openReceiver('prices', { topic: true, durable: true, subscription: 'ticks' });
    expect(await bodies(resumed, 3)).toEqual(['a', 'b', 'c']);
    await resumed.unsubscribe(); // detach, closed=true
    await waitFor(() => subscriptionQueues(broker, 'prices').length === 0, {
      timeoutMs: 10_000,
      what: 'the unsubscribed subscription deleted',
    });
  });

  it('durable without subscription: the link name is the topic address, one per topic per container-id', async () => {
    const conn = await open(broker, 'unnamed-durable');
    const sub = await conn.openReceiver('weather', { topic: true, durable: true });
    expect(sub.name).toBe('weather');
    expect(subscriptionQueues(broker, 'weather')).toEqual(['$sub/unnamed-durable/weather']);
    await sub.unsubscribe();
    await waitFor(() => subscriptionQueues(broker, 'weather').length === 0, {
      timeoutMs: 10_000,
      what: 'the unsubscribed subscription deleted',
    });
  });

  it('a re-sent publish (same message-id) reaches each subscription once', async () => {
    const conn = await open(broker);
    const subs = [
      await conn.openReceiver('dedup-topic', { topic: true, dedup: false }),
      await conn.openReceiver('dedup-topic', { topic: true, dedup: false }),
    ];
    const sender = await conn.openSender('dedup-topic', { topic: true });
    await sender.send({ messageId: 'm-1', body: 'once' });
    await sender.send({ messageId: 'm-1', body: 'once' });
    await sender.send({ messageId: 'm-2', body: 'next' });
    for (const s of subs) expect(await bodies(s, 2)).toEqual(['once', 'next']);
    for (const q of subscriptionQueues(broker, 'dedup-topic')) expect(depth(broker, q)).toBe(0);
  });

  it('a selector on a subscription: only matching messages are kept for it', async () => {
    const conn = await open(broker);
    const green = await conn.openReceiver('colours', { topic: true, selector: "colour = 'green'" });
    const all = await conn.openReceiver('colours', { topic: true });
    const sender = await conn.openSender('colours', { topic: true });
    for (const colour of ['red', 'green', 'blue', 'green'])
      await sender.send({ body: colour, applicationProperties: { colour } });
    expect(await bodies(all, 4)).toEqual(['red', 'green', 'blue', 'green']);
    expect(await bodies(green, 2)).toEqual(['green', 'green']);
    const [greenQueue] = subscriptionQueues(broker, 'colours');
    expect(broker.backend.state.queues.get(greenQueue!)!.selector!.evaluations).toBe(4);
  });

  it('a durable subscription re-attached under the same container-id and name steals the link and keeps the subscription', async () => {
    // a federation topic link taken over by another member while its old owner still runs does this
    const first = await open(broker, 'stolen-durable');
    const old = await first.openReceiver('stolen-topic', {
      topic: true,
      durable: true,
      subscription: 'ticks',
    });
    const stolen = new Promise<string | undefined>((resolve) =>
      old.on('detached', (d) => {
        if (d.closed) resolve(d.error instanceof AmqpError ? d.error.condition : undefined);
      }),
    );
    const second = await open(broker, 'stolen-durable');
    const successor = await second.openReceiver('stolen-topic', {
      topic: true,
      durable: true,
      subscription: 'ticks',
    });
    expect(await stolen).toBe('amqp:link:stolen');
    // a round trip on the old connection: the broker has read its answer to the stolen detach
    await (await first.openSender('stolen-topic', { topic: true })).close();
    expect(subscriptionQueues(broker, 'stolen-topic')).toEqual(['$sub/stolen-durable/ticks']);
    const sender = await (await open(broker)).openSender('stolen-topic', { topic: true });
    await sender.send({ body: 'after the steal' });
    expect(await bodies(successor, 1)).toEqual(['after the steal']);
  });

  it('a topic and a queue cannot share a name', async () => {
    const conn = await open(broker);
    await (await conn.openSender('plain-queue')).send({ body: 'x' });
    await expect(conn.openSender('plain-queue', { topic: true })).rejects.toMatchObject({
      condition: 'amqp:not-allowed',
    });
  });
});

describe('a durable subscription across a broker restart (--data-dir)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quorate-topics-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the subscription and its messages; a non-durable one does not survive', async () => {
    let b = await startBroker({ port: 0, dataDir: dir });
    try {
      const c1 = await open(b, 'restart-client');
      await c1.openReceiver('alerts', { topic: true, durable: true, subscription: 'kept' });
      await c1.openReceiver('alerts', { topic: true, subscription: 'passing' });
      const sender = await c1.openSender('alerts', { topic: true });
      await sender.send({ body: 'before-restart' });
      await c1.close();
      await b.stop();
      b = await startBroker({ port: 0, dataDir: dir });
      expect(subscriptionQueues(b, 'alerts')).toEqual(['$sub/restart-client/kept']);
      const c2 = await open(b, 'restart-client');
      const pub = await c2.openSender('alerts', { topic: true });
      await pub.send({ body: 'after-restart' });
      const sub = await c2.openReceiver('alerts', { topic: true, durable: true, subscription: 'kept' });
      expect(await bodies(sub, 2)).toEqual(['before-restart', 'after-restart']);
    } finally {
      await b.stop();
    }
  });
});
