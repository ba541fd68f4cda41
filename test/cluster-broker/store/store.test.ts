import type { FileHandle } from 'node:fs/promises';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { SMALL_STATE_BYTES } from '../../../src/cluster-broker/files/compaction-pace.js';
import { crc32, crc32Range, crc32Table } from '../../../src/cluster-broker/files/crc32.js';
import {
  type EventStore,
  openStore,
  type StoreOptions,
} from '../../../src/cluster-broker/store/event-store.js';
import { frameRecord } from '../../../src/cluster-broker/store/record-format.js';
import { SEGMENT_HEADER_BYTES, segmentHeader } from '../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../src/cluster-broker/store/segments.js';
import { writeSnapshotFile } from '../../../src/cluster-broker/store/snapshot-file.js';
import { bytes } from '../core/helpers.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'quorate-store-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const opts: StoreOptions = { clock: () => 1 };

function events(n: number, body = 'x'.repeat(100)): BrokerEvent[] {
  const out: BrokerEvent[] = [{ type: 'declare', leaderTime: 10, queue: 'q', options: {} }];
  for (let i = 1; i < n; i++) {
    out.push({
      type: 'enqueue',
      leaderTime: 10 + i,
      queue: 'q',
      message: bytes(`${i}:${body}`),
      dedupKey: `k${i}`,
    });
  }
  return out;
}

/** A consumer takes up to 10 messages of queue q and accepts them, durably. */
async function consumeTen(store: EventStore): Promise<void> {
  const got = store.commit({ type: 'acquire', leaderTime: 500, queue: 'q', consumer: 'c/1', max: 10 });
  const seqs = got.result.messages.map((m) => m.seq);
  await store.commit({
    type: 'settle',
    leaderTime: 500,
    consumer: 'c/1',
    seqs,
    outcome: { type: 'accepted' },
  }).durable;
}

function reference(evs: BrokerEvent[]): Uint8Array {
  const s = new BrokerState();
  for (const e of evs) s.apply(e);
  return s.snapshot();
}

async function onlySegment(dir: string): Promise<string> {
  const segs = (await readdir(dir)).filter((f) => f.endsWith('.seg'));
  expect(segs).toHaveLength(1);
  return join(dir, segs[0]);
}

describe('crc32', () => {
  it('native and table-driven agree with the standard check value', () => {
    const check = bytes('123456789');
    expect(crc32Table(check)).toBe(0xcbf43926);
    expect(crc32(check)).toBe(0xcbf43926);
    const data = new Uint8Array(1000).map((_, i) => (i * 31) & 0xff);
    expect(crc32(data.subarray(500), crc32(data.subarray(0, 500)))).toBe(crc32Table(data));
  });

  it('over a range of a buffer, alone or continued, is the checksum of that range', () => {
    const data = new Uint8Array(100).map((_, i) => (i * 31 + 7) & 0xff);
    expect(crc32Range(data, 0, 100)).toBe(crc32(data));
    expect(crc32Range(data, 10, 28)).toBe(crc32(data.subarray(10, 28)));
    expect(crc32Range(data, 50, 50)).toBe(crc32(new Uint8Array(0)));
    expect(crc32(data.subarray(28, 90), crc32Range(data, 10, 28))).toBe(crc32(data.subarray(10, 90)));
    expect(crc32Range(data, 28, 90, crc32(data.subarray(10, 28)))).toBe(crc32(data.subarray(10, 90)));
  });
});

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

  it('truncating the last record at every byte offset recovers exactly the earlier events', async () => {
    const dir = await tempDir();
    const evs = events(6, 'tail');
    const store = await openStore(dir, opts);
    for (const e of evs) await store.commitDurable(e);
    await store.close();
    const seg = await onlySegment(dir);
    const full = (await stat(seg)).size;
    const withoutLast = reference(evs.slice(0, -1));
    const lastLen = full - (await sizeAfter(evs.slice(0, -1)));
    expect(lastLen).toBeGreaterThan(8);
    const work = await tempDir();
    for (let cut = full - lastLen; cut < full; cut++) {
      await rm(work, { recursive: true, force: true });
      const copy = join(work, 'd');
      await copyDir(dir, copy);
      await truncate(join(copy, seg.split('/').pop()!), cut);
      const s = await openStore(copy, opts);
      expect(s.state.snapshot(), `cut at ${cut}`).toEqual(withoutLast);
      expect(s.stats().truncatedBytes).toBe(cut - (full - lastLen));
      // the log continues correctly after the truncation
      await s.commitDurable(evs[evs.length - 1]);
      await s.close();
      const s2 = await openStore(copy, opts);
      expect(s2.state.snapshot()).toEqual(reference(evs));
      await s2.close();
    }
  });

  it('a bit flip in the last record is corruption, unless its length then runs past the end', async () => {
    const dir = await tempDir();
    const evs = events(4, 'flip');
    const store = await openStore(dir, opts);
    for (const e of evs) await store.commitDurable(e);
    await store.close();
    const seg = await onlySegment(dir);
    const original = await readFile(seg);
    const start = await sizeAfter(evs.slice(0, -1));
    const withoutLast = reference(evs.slice(0, -1));
    let torn = 0;
    for (let at = start; at < original.length; at++) {
      const damaged = Uint8Array.from(original);
      damaged[at] ^= 0x10;
      await writeFile(seg, damaged);
      const len = new DataView(damaged.buffer).getUint32(start, true);
      if (start + 8 + len > damaged.length) {
        // a length pointing past the end reads as a record cut short: cut, as a crash would leave it
        const s = await openStore(dir, opts);
        expect(s.state.snapshot(), `flip at ${at}`).toEqual(withoutLast);
        await s.close();
        torn++;
      } else {
        await expect(openStore(dir, opts), `flip at ${at}`).rejects.toMatchObject({
          name: 'StoreCorruptionError',
          offset: start,
        });
      }
      await writeFile(seg, original);
    }
    expect(torn).toBeGreaterThan(0);
    expect(torn).toBeLessThan(original.length - start);
  });

  it('refuses to open when a record before the tail is damaged', async () => {
    const dir = await tempDir();
    const evs = events(12);
    const store = await openStore(dir, opts);
    for (const e of evs.slice(0, 10)) await store.commitDurable(e);
    await store.close();
    // a second segment holding records 11-12, as a roll would have left it
    const tail = evs.slice(10).map((e) => encodeEvent(e));
    const buf = new Uint8Array(SEGMENT_HEADER_BYTES + tail.reduce((n, p) => n + 8 + p.length, 0));
    buf.set(segmentHeader(11), 0);
    let off = SEGMENT_HEADER_BYTES;
    for (const p of tail) off = frameRecord(p, buf, off);
    await writeFile(join(dir, segmentName(11)), buf);
    const ok = await openStore(dir, opts);
    expect(ok.state.snapshot()).toEqual(reference(evs));
    await ok.close();
    // now damage a record of the first segment: not a torn tail, so opening must fail loudly
    const first = join(dir, segmentName(1));
    const bytesOfFirst = await readFile(first);
    bytesOfFirst[20] ^= 0xff;
    await writeFile(first, bytesOfFirst);
    await expect(openStore(dir, opts)).rejects.toMatchObject({
      name: 'StoreCorruptionError',
      condition: 'amqp:internal-error',
      file: first,
      offset: SEGMENT_HEADER_BYTES,
    });
  });

  it('does not re-snapshot a queue that only grows (compaction stays linear)', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { ...opts, segmentBytes: 8 * 1024 });
    const all = events(400);
    for (const e of all) await store.commit(e).durable;
    // the log is about as large as the live state: a snapshot per 8 KiB segment would
    // re-serialize the whole queue each time (quadratic); none is due yet
    expect(store.stats().snapshotsWritten).toBe(0);
    await store.close();
    const again = await openStore(dir, opts);
    expect(again.state.queueInfo('q')?.depth).toBe(store.state.queueInfo('q')?.depth);
    await again.close();
  });

  it('does not snapshot a draining queue while it is large (compaction-pace.ts), and does once it is small', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { ...opts, segmentBytes: 8 * 1024 });
    // 400 messages of 8 KB: about 3.2 MB live at the peak, well above SMALL_STATE_BYTES
    const all = events(401, 'x'.repeat(8000));
    for (const e of all) await store.commit(e).durable;
    const live = () => store.state.liveBytes();
    // the drain down to ~1.2 MB: the log (~3.2 MB of enqueues) pays for a snapshot from half way
    // (1.6 MB live), but the state drains faster than the log grows
    while (live() > 1.1 * SMALL_STATE_BYTES) await consumeTen(store);
    expect(store.stats().snapshotsWritten).toBe(0);
    // a small state's snapshot costs next to nothing: it is no longer deferred
    while ((store.state.queueInfo('q')?.depth ?? 0) > 0) await consumeTen(store);
    await store.close();
    expect(store.stats().snapshotsWritten).toBeGreaterThan(0);
  });

  // 400-byte bodies: the snapshot references their stored bytes instead of copying them
  it.each([100, 400])(
    'compacts: snapshot + fresh segment, older segments deleted, recovery equal (%i-byte bodies)',
    async (size) => {
      const dir = await tempDir();
      const log: BrokerEvent[] = [];
      const store = await openStore(dir, { ...opts, segmentBytes: 8 * 1024 });
      const commit = <E extends BrokerEvent>(e: E) => {
        log.push(e);
        return store.commit(e);
      };
      for (const e of events(400, 'x'.repeat(size))) {
        await commit(e).durable;
        if (log.length % 10 === 0) {
          // consume most messages (compaction pays off once the log outgrows the live state);
          // one per batch stays acquired, so snapshots hold more than plain enqueues
          const got = commit({ type: 'acquire', leaderTime: 500, queue: 'q', consumer: 'c/1', max: 10 });
          const seqs = got.result.messages.map((m) => m.seq);
          expect(seqs.length).toBeGreaterThan(0);
          commit({
            type: 'settle',
            leaderTime: 500,
            consumer: 'c/1',
            seqs: seqs.slice(0, -1),
            outcome: { type: 'accepted' },
          });
        }
      }
      await store.close();
      const stats = store.stats();
      expect(stats.snapshotsWritten).toBeGreaterThan(3);
      expect(stats.segmentsDeleted).toBeGreaterThan(3);
      const files = await readdir(dir);
      expect(files).toContain('snapshot.bin');
      expect(files.filter((f) => f.endsWith('.seg')).length).toBeLessThanOrEqual(2);
      const again = await openStore(dir, opts);
      // every event is either in the snapshot or replayed from the remaining segments
      expect(again.stats().recoveredSnapshotIndex).toBeGreaterThan(0);
      const expected = new BrokerState();
      for (const e of log) expected.apply(e);
      // the reopened store released c/1's leftover acquisition
      expected.apply({ type: 'release-all', leaderTime: 1 });
      expect(again.state.queueInfo('q')).toEqual(expected.queueInfo('q'));
      expect(again.state.snapshot()).toEqual(expected.snapshot());
      await again.close();
    },
  );

  it('waits to compact while holdCompaction says so (told the snapshot size), then compacts', async () => {
    const dir = await tempDir();
    let hold = true;
    const asked: number[] = [];
    const store = await openStore(dir, {
      ...opts,
      segmentBytes: 4 * 1024,
      holdCompaction: (bytes) => {
        asked.push(bytes);
        return hold;
      },
    });
    const commitAndConsume = async (e: BrokerEvent): Promise<void> => {
      await store.commit(e).durable;
      if (e.type !== 'enqueue') return;
      await consumeTen(store);
    };
    const all = events(120);
    for (const e of all.slice(0, 80)) await commitAndConsume(e);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((b) => b >= 0 && b < 1024)).toBe(true); // the live bytes: one message at most
    expect(store.stats().snapshotsWritten).toBe(0);
    hold = false;
    for (const e of all.slice(80)) await commitAndConsume(e);
    await store.close();
    expect(store.stats().snapshotsWritten).toBeGreaterThan(0);
  });

  it('recovers from a compaction that crashed before deleting old segments or mid-snapshot', async () => {
    const dir = await tempDir();
    const evs = events(20);
    const frame = (start: number, list: BrokerEvent[]) => {
      const payloads = list.map((e) => encodeEvent(e));
      const buf = new Uint8Array(SEGMENT_HEADER_BYTES + payloads.reduce((n, p) => n + 8 + p.length, 0));
      buf.set(segmentHeader(start), 0);
      let off = SEGMENT_HEADER_BYTES;
      for (const p of payloads) off = frameRecord(p, buf, off);
      return buf;
    };
    await writeFile(join(dir, segmentName(1)), frame(1, evs.slice(0, 10)));
    await writeFile(join(dir, segmentName(11)), frame(11, evs.slice(10)));
    const at12 = new BrokerState();
    for (const e of evs.slice(0, 12)) at12.apply(e);
    await writeSnapshotFile(dir, { index: 12, state: at12.snapshot() });
    await writeFile(join(dir, 'snapshot.bin.tmp'), new Uint8Array([1, 2, 3])); // a half-written next snapshot
    const s = await openStore(dir, opts);
    expect(s.state.snapshot()).toEqual(reference(evs));
    expect(s.stats()).toMatchObject({
      index: 20,
      recoveredSnapshotIndex: 12,
      recoveredEvents: 8,
      segmentsDeleted: 1,
    });
    await s.close();
    expect((await readdir(dir)).sort()).toEqual([segmentName(11), 'snapshot.bin']);
  });

  it('continues in a new segment when the snapshot is ahead of the log (snapshot landed before the tail)', async () => {
    const dir = await tempDir();
    const evs = events(12);
    const store = await openStore(dir, opts);
    for (const e of evs.slice(0, 10)) await store.commitDurable(e);
    await store.close();
    // A compaction's snapshot at index 12 became durable, records 11-12 never did.
    const ahead = new BrokerState();
    for (const e of evs) ahead.apply(e);
    await writeSnapshotFile(dir, { index: 12, state: ahead.snapshot() });
    const s = await openStore(dir, opts);
    expect(s.state.snapshot()).toEqual(ahead.snapshot());
    const more: BrokerEvent = { type: 'enqueue', leaderTime: 99, queue: 'q', message: bytes('13') };
    await s.commitDurable(more);
    await s.close();
    const s2 = await openStore(dir, opts);
    expect(s2.state.snapshot()).toEqual(reference([...evs, more]));
    expect((await readdir(dir)).filter((f) => f.endsWith('.seg'))).toHaveLength(1);
    await s2.close();
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

/** Bytes a segment takes for these events (its header, then an 8-byte header + payload each). */
async function sizeAfter(evs: BrokerEvent[]): Promise<number> {
  return evs.reduce((n, e) => n + 8 + encodeEvent(e).length, SEGMENT_HEADER_BYTES);
}

async function copyDir(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const f of await readdir(from)) await copyFile(join(from, f), join(to, f));
}
