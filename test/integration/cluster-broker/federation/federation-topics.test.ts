/**
 * Topic federation between in-process single nodes (docs/federation.md#topics): every message
 * published upstream reaches every local subscription once, a cycle A -> B -> A does not loop,
 * a full local subscription holds a republish back without dropping it, and a restarted link
 * resumes the same durable upstream subscription with what was published while it was down.
 */
import { describe, expect, it } from 'vitest';
import { type BrokerNode, startBroker } from '../../../../src/cluster-broker/assembly/index.js';
import type { FederationConfig } from '../../../../src/cluster-broker/federation/index.js';
import { subscriptionQueue } from '../../../../src/cluster-broker/server/topic-attach.js';
import type { Receiver } from '../../../../src/index.js';
import { inProcessBrokers, publishIds } from '../../../support/federation.js';
import { freePort, waitFor } from '../../../support/net.js';

const { started, broker, client } = inProcessBrokers();

function from(upstream: BrokerNode | string, name = 'up'): FederationConfig {
  const url = typeof upstream === 'string' ? upstream : upstream.url;
  return { upstreams: [{ name, urls: [url], topics: ['prices'], reconnectDelayMs: 100 }] };
}

async function subscribe(url: string, name?: string): Promise<Receiver> {
  const conn = await client(url);
  return name === undefined
    ? conn.openReceiver('prices', { topic: true, credit: 100, dedup: false })
    : conn.openReceiver('prices', {
        topic: true,
        durable: true,
        subscription: name,
        credit: 100,
        dedup: false,
      });
}

async function running(b: BrokerNode): Promise<void> {
  await waitFor(() => b.federation()[0]?.state === 'running', { timeoutMs: 20_000, what: 'link running' });
}

/** Takes `n` messages from `r` (accepting each) and returns their ids in arrival order. */
async function take(r: Receiver, n: number): Promise<string[]> {
  const got: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = await r.receive({ timeoutMs: 20_000 });
    got.push(String(d.message.messageId));
    await d.accept();
  }
  return got;
}

/** Messages waiting in queue `name` of `b` (a subscription's queue included). */
function depth(b: BrokerNode, name: string): number {
  return b.stats().queues.find((q) => q.name === name)?.depth ?? 0;
}

const ids = (n: number, prefix = 'm'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('topic federation (in process)', () => {
  it('every message published upstream reaches every local subscription once', async () => {
    const a = await broker('A');
    const b = await broker('B', from(a));
    const durable = await subscribe(b.url, 'archive');
    const plain = await subscribe(b.url);
    await running(b);
    expect(b.federation()[0]).toMatchObject({
      upstream: 'up',
      kind: 'topic',
      queue: 'prices',
      upstreamClusterId: 'A',
    });
    await publishIds(a.url, 'prices', ids(30));
    expect(await take(durable, 30)).toEqual(ids(30));
    expect(await take(plain, 30)).toEqual(ids(30));
    await waitFor(() => b.federation()[0]!.moved === 30, { timeoutMs: 20_000, what: '30 moved' });
    // nothing more: no second copy is on its way, and the upstream subscription is drained
    expect(durable.buffered + plain.buffered).toBe(0);
    const sub = subscriptionQueue('quorate-federation/B/up/prices', 'federation/B/prices');
    await waitFor(() => depth(a, sub) === 0, { timeoutMs: 20_000, what: 'upstream subscription drained' });
    expect(b.federation()[0]).toMatchObject({ moved: 30, duplicates: 0, leftUpstream: 0 });
  });

  it('a cycle A -> B -> A on a topic does not loop', async () => {
    const portA = await freePort();
    const b = await broker('B', from(`amqp://127.0.0.1:${portA}`, 'a'));
    const a = await broker('A', from(b, 'b'), portA);
    const onA = await subscribe(a.url);
    const onB = await subscribe(b.url);
    await Promise.all([running(a), running(b)]);
    await publishIds(a.url, 'prices', ['from-a']);
    await publishIds(b.url, 'prices', ['from-b']);
    const gotB = await Promise.all([onB.receive({ timeoutMs: 20_000 }), onB.receive({ timeoutMs: 20_000 })]);
    const gotA = await Promise.all([onA.receive({ timeoutMs: 20_000 }), onA.receive({ timeoutMs: 20_000 })]);
    const routes = (ds: typeof gotA): Record<string, unknown> =>
      Object.fromEntries(
        ds.map((d) => [String(d.message.messageId), d.message.messageAnnotations?.['x-opt-quorate-route']]),
      );
    expect(routes(gotA)).toEqual({ 'from-a': undefined, 'from-b': ['B'] });
    expect(routes(gotB)).toEqual({ 'from-a': ['A'], 'from-b': undefined });
    // each came back on the other link and was not taken home again
    await waitFor(() => a.federation()[0]!.leftUpstream === 1 && b.federation()[0]!.leftUpstream === 1, {
      timeoutMs: 20_000,
      what: 'both links left the returning message',
    });
    expect(onA.buffered + onB.buffered).toBe(0);
    expect(a.federation()[0]!.moved + b.federation()[0]!.moved).toBe(2);
  });

  it('a full local subscription holds the republish back: refused, retried, never dropped', async () => {
    const a = await broker('A');
    const b = await startBroker({
      port: 0,
      host: '127.0.0.1',
      clusterId: 'B',
      federation: from(a),
      queueDefaults: { maxMessages: 2 },
    });
    started.push(b);
    const conn = await client(b.url);
    const sub = await conn.openReceiver('prices', {
      topic: true,
      durable: true,
      subscription: 'slow',
      credit: 0,
    });
    await running(b);
    await publishIds(a.url, 'prices', ids(3));
    await waitFor(() => /resource-limit-exceeded/.test(b.federation()[0]!.lastError ?? ''), {
      timeoutMs: 20_000,
      what: 'the third republish refused',
    });
    expect(b.federation()[0]!.moved).toBe(2);
    sub.addCredit(3);
    expect(await take(sub, 3)).toEqual(ids(3));
    await waitFor(() => b.federation()[0]!.moved === 3, { timeoutMs: 20_000, what: 'the third moved' });
  });

  it('a restarted link resumes its durable upstream subscription with what was published meanwhile', async () => {
    const a = await broker('A');
    const b = await broker('B', from(a));
    const sub = await subscribe(b.url, 'archive');
    await running(b);
    await publishIds(a.url, 'prices', ids(5, 'before'));
    expect(await take(sub, 5)).toEqual(ids(5, 'before'));

    await b.federationLinks!.setActive(false);
    expect(b.federation()[0]!.state).toBe('standby');
    await publishIds(a.url, 'prices', ids(10, 'while-down'));
    // kept upstream by the link's subscription, the one subscription there
    const upstreamSub = subscriptionQueue('quorate-federation/B/up/prices', 'federation/B/prices');
    expect(depth(a, upstreamSub)).toBe(10);
    expect(
      a
        .stats()
        .queues.filter((q) => q.name.startsWith('$sub/'))
        .map((q) => q.name),
    ).toEqual([upstreamSub]);

    await b.federationLinks!.setActive(true);
    expect(await take(sub, 10)).toEqual(ids(10, 'while-down'));
    await waitFor(() => depth(a, upstreamSub) === 0, {
      timeoutMs: 20_000,
      what: 'upstream subscription drained',
    });
    expect(b.federation()[0]).toMatchObject({ moved: 15, duplicates: 0 });
  });
});
