/** The single-node backend: durability rule, availability notifications, expiry housekeeping. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryBackend, openLocalBackend } from '../../../src/cluster-broker/server/local-backend.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('LocalBackend', () => {
  it('notifies availability on enqueue, release and modified, not on accept', async () => {
    const b = memoryBackend();
    const seen: string[] = [];
    b.on('available', (q) => seen.push(q));
    await b.submit({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    await b.submit({ type: 'enqueue', leaderTime: 1, queue: 'q', message: bytes('a') });
    await b.submit({ type: 'enqueue', leaderTime: 1, queue: 'q', message: bytes('b') });
    expect(seen).toEqual(['q', 'q']);
    const { messages } = await b.submit({
      type: 'acquire',
      leaderTime: 1,
      queue: 'q',
      consumer: 'c',
      max: 2,
    });
    seen.length = 0;
    await b.submit({
      type: 'settle',
      leaderTime: 1,
      consumer: 'c',
      seqs: [messages[0]!.seq],
      outcome: { type: 'accepted' },
    });
    expect(seen).toEqual([]);
    await b.submit({
      type: 'settle',
      leaderTime: 1,
      consumer: 'c',
      seqs: [messages[1]!.seq],
      outcome: { type: 'modified', deliveryFailed: true },
    });
    expect(seen).toEqual(['q']);
    await b.submit({ type: 'acquire', leaderTime: 1, queue: 'q', consumer: 'c2' });
    seen.length = 0;
    await b.submit({ type: 'release-consumer', leaderTime: 1, consumer: 'c2' });
    expect(seen).toEqual(['q']);
    await b.close();
  });

  it('drops expired messages on its own (leader-time housekeeping)', async () => {
    let now = 1000;
    const b = memoryBackend({ clock: () => now, expireIntervalMs: 10 });
    await b.submit({ type: 'declare', leaderTime: now, queue: 'q', options: {} });
    await b.submit({
      type: 'enqueue',
      leaderTime: now,
      queue: 'q',
      message: bytes('x'),
      expiresAt: now + 50,
    });
    expect(b.state.queueInfo('q')?.depth).toBe(1);
    now += 100;
    const deadline = Date.now() + 5000;
    while (b.state.queueInfo('q')?.depth !== 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(b.state.queueInfo('q')?.depth).toBe(0);
    await b.close();
  });

  it('over the event store: enqueues resolve once durable and survive reopening', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qb-local-'));
    const b = await openLocalBackend(dir);
    await b.submit({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    const r = await b.submit({ type: 'enqueue', leaderTime: 1, queue: 'q', message: bytes('kept') });
    expect(r.status).toBe('enqueued');
    expect(b.stats()?.durableIndex).toBe(b.stats()?.index);
    await b.close();
    await expect(b.submit({ type: 'expire', leaderTime: 2 })).rejects.toThrow(/stopping/);
    const again = await openLocalBackend(dir);
    expect(again.state.queueInfo('q')?.depth).toBe(1);
    await again.close();
    await rm(dir, { recursive: true, force: true });
  });
});
