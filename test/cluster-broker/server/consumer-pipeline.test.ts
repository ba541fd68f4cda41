/**
 * A consumer link with several acquires in flight, against a backend that applies what is
 * submitted only when the test commits it (as a cluster member does once an entry is committed
 * on a majority): the acquires cover disjoint parts of the credit, the link sends in queue
 * order, a short queue is not asked twice, trickling credit waits for a batch, and a link that
 * goes keeps nothing.
 */
import { describe, expect, it } from 'vitest';
import type { AcquireEvent, BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import type { ResultOf } from '../../../src/cluster-broker/core/results.js';
import { decodeMessage } from '../../../src/codec/index.js';
import type { ReceiverLink } from '../../../src/protocol/index.js';
import { InProcessPair, msg, serverContext } from './in-process.js';
import { ToggleBackend } from './toggle-backend.js';

/** Submissions wait, unapplied, until commit() applies them in submission order. */
class CommitLaterBackend extends ToggleBackend {
  readonly waiting: Array<{ event: BrokerEvent; commit: () => Promise<void> }> = [];

  override submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ event, commit: () => this.inner.submit(event).then(resolve, reject) });
    });
  }

  /** The acquires submitted and not committed yet. */
  acquiresWaiting(): AcquireEvent[] {
    return this.waiting.flatMap((w) => (w.event.type === 'acquire' ? [w.event] : []));
  }

  /** Commits everything submitted so far, in order. */
  async commit(): Promise<void> {
    for (const w of this.waiting.splice(0)) await w.commit();
  }
}

/** A queue of `n` messages (bodies 0..n-1) and a receiver attached to it granting `credit`. */
async function consumerOf(
  n: number,
  credit: number,
): Promise<{ backend: CommitLaterBackend; pair: InProcessPair; receiver: ReceiverLink }> {
  const backend = new CommitLaterBackend();
  await backend.inner.submit({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
  for (let i = 0; i < n; i++) {
    await backend.inner.submit({ type: 'enqueue', leaderTime: 1, queue: 'q', message: msg({ body: i }) });
  }
  const pair = new InProcessPair(serverContext(backend));
  await pair.open();
  const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
  receiver.flow(credit);
  await pair.settle();
  return { backend, pair, receiver };
}

/** Commits and moves frames until `done` holds (each round commits what the last one submitted). */
async function commitUntil(
  backend: CommitLaterBackend,
  pair: InProcessPair,
  done: () => boolean,
): Promise<void> {
  for (let round = 0; round < 100 && !done(); round++) {
    await backend.commit();
    await pair.settle();
  }
}

const bodies = (pair: InProcessPair) => pair.of('message').map((e) => decodeMessage(e.delivery.payload).body);

describe('consumer link: acquires in flight', () => {
  it('asks for its credit in several acquires at once, never for more than the credit, and sends in queue order', async () => {
    const { backend, pair } = await consumerOf(700, 700);
    const asked = backend.acquiresWaiting();
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.reduce((n, a) => n + (a.max ?? 1), 0)).toBeLessThanOrEqual(700);
    await commitUntil(backend, pair, () => pair.of('message').length >= 700);
    expect(bodies(pair)).toEqual(Array.from({ length: 700 }, (_, i) => i));
    expect(backend.state.queueInfo('q')).toMatchObject({ acquired: 700, available: 0 });
    await backend.inner.close();
  });

  it('asks for no more at once than the queue holds: one acquire when it covers what is there', async () => {
    const { backend, pair } = await consumerOf(100, 700);
    expect(backend.acquiresWaiting()).toHaveLength(1);
    await commitUntil(backend, pair, () => pair.of('message').length >= 100);
    expect(bodies(pair)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    await backend.inner.close();
  });

  it('credit trickling in while an acquire is in flight waits for a batch', async () => {
    const { backend, pair, receiver } = await consumerOf(700, 100);
    for (let credit = 101; credit <= 110; credit++) {
      receiver.flow(credit);
      await pair.settle();
    }
    expect(backend.acquiresWaiting()).toHaveLength(1);
    receiver.flow(200);
    await pair.settle();
    expect(backend.acquiresWaiting().map((a) => a.max)).toEqual([100, 100]);
    await commitUntil(backend, pair, () => pair.of('message').length >= 200);
    expect(bodies(pair)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    await backend.inner.close();
  });

  it('a link that detaches with acquires in flight leaves every message available', async () => {
    const { backend, pair, receiver } = await consumerOf(700, 700);
    expect(backend.acquiresWaiting().length).toBeGreaterThan(1);
    receiver.detach();
    await pair.settle();
    await commitUntil(backend, pair, () => backend.waiting.length === 0);
    expect(pair.of('message')).toHaveLength(0);
    expect(backend.state.queueInfo('q')).toMatchObject({ acquired: 0, available: 700 });
    await backend.inner.close();
  });
});
