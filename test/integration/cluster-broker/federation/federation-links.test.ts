/**
 * Queue federation between in-process single nodes (docs/federation.md): the demand rule, a
 * cycle that does not loop, a link that refuses its own cluster, and a link that resumes by
 * itself after its upstream was down.
 */
import { describe, expect, it } from 'vitest';
import { type BrokerNode, startBroker } from '../../../../src/cluster-broker/assembly/index.js';
import type { BrokerEvent } from '../../../../src/cluster-broker/core/events.js';
import type { ResultOf } from '../../../../src/cluster-broker/core/results.js';
import type { FederationConfig } from '../../../../src/cluster-broker/federation/index.js';
import { ToggleBackend } from '../../../cluster-broker/server/toggle-backend.js';
import { inProcessBrokers, sendIds } from '../../../support/federation.js';
import { freePort, waitFor } from '../../../support/net.js';

/** A real in-memory backend whose events of one type apply at once but commit only when the test says so. */
class HeldCommits extends ToggleBackend {
  held = 0;

  constructor(private readonly holds: BrokerEvent['type'] = 'enqueue') {
    super();
  }

  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  override submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    const result = super.submit(event);
    if (event.type !== this.holds) return result;
    this.held++;
    return this.gate.then(() => result);
  }

  commit(): void {
    this.open();
  }
}

/**
 * A real in-memory backend that counts the turns (runs of synchronous code, up to the next
 * microtask) in which enqueues were submitted: a cluster's leader sends what was proposed in one
 * such turn to its followers as one append (replication/replica-inputs.ts kick()).
 */
class EnqueueTurns extends ToggleBackend {
  enqueues = 0;
  turns = 0;
  private inTurn = false;

  override submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    if (event.type === 'enqueue') {
      this.enqueues++;
      if (!this.inTurn) {
        this.inTurn = true;
        this.turns++;
        queueMicrotask(() => {
          this.inTurn = false;
        });
      }
    }
    return super.submit(event);
  }
}

const { started, broker, client } = inProcessBrokers();

function from(upstream: BrokerNode | string, name = 'up'): FederationConfig {
  const url = typeof upstream === 'string' ? upstream : upstream.url;
  return { upstreams: [{ name, urls: [url], queues: ['orders'], reconnectDelayMs: 100 }] };
}

function depth(b: BrokerNode, queue = 'orders'): number {
  return b.stats().queues.find((q) => q.name === queue)?.depth ?? 0;
}

async function running(b: BrokerNode): Promise<void> {
  await waitFor(() => b.federation()[0]?.state === 'running', { timeoutMs: 20_000, what: 'link running' });
}

/** Stops a broker this test started on its own backend, then closes that backend. */
async function stopWithBackend(b: BrokerNode, backend: ToggleBackend): Promise<void> {
  started.splice(started.indexOf(b), 1);
  await b.stop();
  await backend.close();
}

const ids = (n: number, prefix = 'm'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/**
 * Upstream A (its settle events held until the test commits them) with `n` messages, downstream B
 * federating it, and a consumer on B with no credit yet.
 */
async function heldSettlesUpstream(n: number) {
  const upstreamBackend = new HeldCommits('settle');
  const a = await startBroker({ port: 0, host: '127.0.0.1', backend: upstreamBackend, clusterId: 'A' });
  started.push(a);
  await sendIds(a.url, 'orders', ids(n));
  const b = await broker('B', from(a));
  const consumer = await (await client(b.url)).openReceiver('orders', { credit: 0 });
  await running(b);
  return { a, upstreamBackend, b, consumer };
}

/** Stops downstream `b`, then upstream `a` and its backend. */
async function stopBoth(a: BrokerNode, upstreamBackend: HeldCommits, b: BrokerNode): Promise<void> {
  // the downstream first, so its link does not spin reconnecting to a stopped upstream
  started.splice(started.indexOf(b), 1);
  await b.stop();
  await stopWithBackend(a, upstreamBackend);
}

describe('queue federation (in process)', () => {
  it('moves messages only for the credit local consumers hold', async () => {
    const a = await broker('A');
    await sendIds(a.url, 'orders', ids(20));
    const b = await broker('B', from(a));
    const consumer = await (await client(b.url)).openReceiver('orders', { credit: 0 });
    await running(b);
    expect(b.federation()[0]).toMatchObject({ upstream: 'up', queue: 'orders', upstreamClusterId: 'A' });
    for (const grant of [5, 3]) {
      consumer.addCredit(grant);
      for (let i = 0; i < grant; i++) await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    }
    await waitFor(() => b.federation()[0]!.moved === 8, { timeoutMs: 20_000, what: '8 moved' });
    // no local credit left: nothing more moves, nothing is held here for nobody
    expect(depth(a)).toBe(12);
    expect(depth(b)).toBe(0);
    expect(b.federation()[0]!.moved).toBe(8);
  });

  it('accepts a message upstream only once its local enqueue committed', async () => {
    const a = await broker('A');
    await sendIds(a.url, 'orders', ['one']);
    const backend = new HeldCommits();
    const b = await startBroker({ port: 0, host: '127.0.0.1', backend, clusterId: 'B', federation: from(a) });
    started.push(b);
    await b.federationLinks!.setActive(true);
    const consumer = await (await client(b.url)).openReceiver('orders', { credit: 1 });
    await waitFor(() => backend.held === 1, { timeoutMs: 20_000, what: 'the local enqueue submitted' });
    // applied here, not committed: the upstream must still hold it
    expect(depth(a)).toBe(1);
    backend.commit();
    await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    await waitFor(() => b.federation()[0]!.moved === 1, { timeoutMs: 20_000, what: 'moved' });
    expect(depth(a)).toBe(0);
    await stopWithBackend(b, backend);
  });

  it('grants more once a move commits here, before the upstream confirms its accept', async () => {
    const { a, upstreamBackend, b, consumer } = await heldSettlesUpstream(10);
    // each round: the moves' accepts wait upstream (nothing settled there), yet the next local
    // credit moves more, because a committed move counts here, not as credit still outstanding
    for (let round = 0; round < 2; round++) {
      consumer.addCredit(3);
      for (let i = 0; i < 3; i++) await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    }
    // no accept confirmed upstream yet: the link counts a move once its accept is
    expect(upstreamBackend.held).toBeGreaterThan(0);
    expect(b.federation()[0]!.moved).toBe(0);
    upstreamBackend.commit();
    await waitFor(() => b.federation()[0]!.moved === 6, { timeoutMs: 20_000, what: '6 accepted upstream' });
    expect(depth(a)).toBe(4);
    await stopBoth(a, upstreamBackend, b);
  });

  it('sends the accepts of moves committed while one batch is unconfirmed upstream as one batch', async () => {
    const { a, upstreamBackend, b, consumer } = await heldSettlesUpstream(21);
    consumer.addCredit(1);
    await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    await waitFor(() => upstreamBackend.held === 1, { timeoutMs: 20_000, what: 'the first accept upstream' });
    // its settlement not committed upstream: the next moves commit here, their accepts wait
    consumer.addCredit(20);
    for (let i = 0; i < 20; i++) await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    expect(upstreamBackend.held).toBe(1);
    upstreamBackend.commit();
    await waitFor(() => b.federation()[0]!.moved === 21, { timeoutMs: 20_000, what: '21 accepted upstream' });
    // the twenty went out together: one settle event upstream for all of them
    expect(upstreamBackend.held).toBe(2);
    expect(depth(a)).toBe(0);
    await stopBoth(a, upstreamBackend, b);
  });

  it('commits the deliveries that arrived together in one turn here, not one turn each', async () => {
    const a = await broker('A');
    await sendIds(a.url, 'orders', ids(50));
    const backend = new EnqueueTurns();
    const b = await startBroker({ port: 0, host: '127.0.0.1', backend, clusterId: 'B', federation: from(a) });
    started.push(b);
    await b.federationLinks!.setActive(true);
    await running(b);
    const consumer = await (await client(b.url)).openReceiver('orders', { credit: 50 });
    for (let i = 0; i < 50; i++) await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    await waitFor(() => b.federation()[0]!.moved === 50, { timeoutMs: 20_000, what: '50 moved' });
    expect(backend.enqueues).toBe(50);
    // one credit grant of 50: its transfers arrive in a few reads; one at a time would be 50 turns
    expect(backend.turns).toBeLessThanOrEqual(10);
    await stopWithBackend(b, backend);
  });

  it('a cycle A -> B -> A does not loop: the message stays where its route forbids the move', async () => {
    const portA = await freePort();
    const b = await broker('B', from(`amqp://127.0.0.1:${portA}`, 'a'));
    const a = await broker('A', from(b, 'b'), portA);
    await sendIds(a.url, 'orders', ['looping']);
    const onB = await (await client(b.url)).openReceiver('orders', { credit: 1 });
    const d = await onB.receive({ timeoutMs: 20_000 });
    expect(d.message.messageAnnotations?.['x-opt-quorate-route']).toEqual(['A']);
    // back to B's queue, and only A has a consumer now: A's link must not take it back
    await d.release();
    await onB.close();
    const onA = await (await client(a.url)).openReceiver('orders', { credit: 1 });
    await waitFor(() => a.federation()[0]!.leftUpstream >= 1, { timeoutMs: 20_000, what: 'left upstream' });
    expect(depth(b)).toBe(1);
    expect(onA.buffered).toBe(0);
    expect(a.federation()[0]!.moved).toBe(0);
  });

  it('refuses to run when the upstream reports our own cluster id', async () => {
    const a = await broker('same');
    const b = await broker('same', from(a));
    await waitFor(() => b.federation()[0]?.state === 'refused', { timeoutMs: 20_000, what: 'refused' });
    expect(b.federation()[0]!.lastError).toMatch(/own cluster id 'same'/);
  });

  it('resumes by itself when its upstream comes back', async () => {
    const port = await freePort();
    const a1 = await broker('A', undefined, port);
    const b = await broker('B', from(a1));
    const consumer = await (await client(b.url)).openReceiver('orders', { credit: 10 });
    await running(b);
    started.splice(started.indexOf(a1), 1);
    await a1.stop();
    await waitFor(() => b.federation()[0]!.state === 'connecting', { timeoutMs: 20_000, what: 'link down' });
    const a2 = await broker('A', undefined, port);
    await sendIds(a2.url, 'orders', ids(3, 'after'));
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await consumer.receive({ timeoutMs: 30_000 });
      got.push(String(d.message.messageId));
      await d.accept();
    }
    expect(got.sort()).toEqual(ids(3, 'after'));
    expect(b.federation()[0]!.state).toBe('running');
  });
});
