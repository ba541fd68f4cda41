/** The event store's compaction: when it snapshots, what it deletes, and recovery from a crashed one. */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { SMALL_STATE_BYTES } from '../../../src/cluster-broker/files/compaction-pace.js';
import { openStore } from '../../../src/cluster-broker/store/event-store.js';
import { frameRecord } from '../../../src/cluster-broker/store/record-format.js';
import { SEGMENT_HEADER_BYTES, segmentHeader } from '../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../src/cluster-broker/store/segments.js';
import { writeSnapshotFile } from '../../../src/cluster-broker/store/snapshot-file.js';
import { useTempDirs } from '../../support/temp-dirs.js';
import { bytes } from '../core/helpers.js';
import { consumeTen, events, opts, reference } from './store-helpers.js';

const tempDir = useTempDirs('quorate-store-');

describe('event store', () => {
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
});
