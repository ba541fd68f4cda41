/** The event store's torn-tail rule on reopen: a cut or flipped last record vs damage before the tail. */
import { readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import { openStore } from '../../../src/cluster-broker/store/event-store.js';
import { frameRecord } from '../../../src/cluster-broker/store/record-format.js';
import { SEGMENT_HEADER_BYTES, segmentHeader } from '../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../src/cluster-broker/store/segments.js';
import { useTempDirs } from '../../support/temp-dirs.js';
import { copyDir, events, onlySegment, opts, reference, sizeAfter } from './store-helpers.js';

const tempDir = useTempDirs('quorate-store-');

describe('event store', () => {
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
});
