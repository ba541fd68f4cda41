/** The event store's commit path and reopen: recovery, group commit, durable duplicates, failing stop. */
import type { FileHandle } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/cluster-broker/store/event-store.js';
import { useTempDirs } from '../../support/temp-dirs.js';
import { bytes } from '../core/helpers.js';
import { events, opts, reference } from './store-helpers.js';

const tempDir = useTempDirs('quorate-store-');

describe('event store', () => {
  it('recovers every committed event after close and reopen', async () => {
    const dir = await tempDir();
    const evs = events(50);
    const store = await openStore(dir, opts);
    for (const e of evs) await store.commitDurable(e);
    expect(store.stats()).toMatchObject({ index: 50, durableIndex: 50 });
    await store.close();
    expect(() => store.commit(evs[1])).toThrow(/closed/);
    const again = await openStore(dir, opts);
    expect(again.state.snapshot()).toEqual(reference(evs));
    expect(again.stats()).toMatchObject({ index: 50, recoveredEvents: 50, truncatedBytes: 0 });
    await again.close();
  });

  it('group-commits: many concurrent commits share few fsyncs', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, opts);
    const evs = events(1000);
    const before = store.stats().fsyncs;
    const results = await Promise.all(evs.map((e) => store.commitDurable(e)));
    const fsyncs = store.stats().fsyncs - before;
    expect(results.filter((r) => r.type === 'enqueue' && r.status === 'enqueued')).toHaveLength(999);
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThanOrEqual(5);
    // commits that arrive while an fsync is in flight join the next batch
    const waves: Promise<unknown>[] = [];
    for (let w = 0; w < 20; w++) {
      waves.push(
        store.commitDurable({ type: 'enqueue', leaderTime: 2000 + w, queue: 'q', message: bytes(`w${w}`) }),
      );
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waves);
    expect(store.stats().durableIndex).toBe(1020);
    await store.close();
  });

  it('duplicate answers are durable too: the answer waits for its own record', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, opts);
    await store.commitDurable({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    const first = store.commit({
      type: 'enqueue',
      leaderTime: 2,
      queue: 'q',
      message: bytes('a'),
      dedupKey: 'k',
    });
    const second = store.commit({
      type: 'enqueue',
      leaderTime: 2,
      queue: 'q',
      message: bytes('a'),
      dedupKey: 'k',
    });
    expect(first.result.status).toBe('enqueued');
    expect(second.result.status).toBe('duplicate');
    await second.durable;
    expect(store.stats().durableIndex).toBe(3);
    await store.close();
  });

  it('fails stop when the disk write fails: durable rejects, later commits throw', async () => {
    const dir = await tempDir();
    const failures: unknown[] = [];
    const store = await openStore(dir, { ...opts, onFailure: (e) => failures.push(e) });
    await store.commitDurable({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    // pull the file out from under the store (the real write then fails with EBADF)
    await (store as unknown as { fh: FileHandle }).fh.close();
    const c = store.commit({ type: 'enqueue', leaderTime: 2, queue: 'q', message: bytes('a') });
    await expect(c.durable).rejects.toMatchObject({ name: 'StoreError', condition: 'amqp:internal-error' });
    expect(failures).toHaveLength(1);
    expect(() => store.commit({ type: 'expire', leaderTime: 3 })).toThrow(/write failed/);
    await expect(store.flush()).rejects.toMatchObject({ name: 'StoreError' });
    await store.close();
  });

  it('on open, acquisitions of the dead process are released; confirmed accepts stay', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, opts);
    await store.commitDurable({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    for (const b of ['a', 'b', 'c']) {
      await store.commitDurable({ type: 'enqueue', leaderTime: 2, queue: 'q', message: bytes(b) });
    }
    const got = store.commit({ type: 'acquire', leaderTime: 3, queue: 'q', consumer: 'c/1', max: 3 }).result
      .messages;
    await store.commitDurable({
      type: 'settle',
      leaderTime: 4,
      consumer: 'c/1',
      seqs: [got[0].seq],
      outcome: { type: 'accepted' },
    });
    await store.close();
    const again = await openStore(dir, opts);
    expect(again.state.listConsumers()).toEqual([]);
    expect(again.state.queueInfo('q')).toMatchObject({ depth: 2, available: 2, acquired: 0 });
    await again.close();
  });
});
