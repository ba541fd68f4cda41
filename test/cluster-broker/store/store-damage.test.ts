/** The store's torn-tail rule and repair, on files built byte by byte (the CLI test is in integration/). */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { BufferSource } from '../../../src/cluster-broker/files/chunked-reader.js';
import { classifyTail, countRecords } from '../../../src/cluster-broker/store/damage.js';
import { openStore, type StoreOptions } from '../../../src/cluster-broker/store/event-store.js';
import { frameRecord } from '../../../src/cluster-broker/store/record-format.js';
import { SEGMENT_HEADER_BYTES, segmentHeader } from '../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../src/cluster-broker/store/segments.js';
import { useTempDirs } from '../../support/temp-dirs.js';
import { bytes } from '../core/helpers.js';

const tempDir = useTempDirs('quorate-damage-');

function declare(i: number): BrokerEvent {
  return { type: 'declare', leaderTime: i, queue: `q${i}`, options: {} };
}

/** A segment starting at `start` holding these events; returns it and each record's offset. */
function segment(start: number, events: BrokerEvent[]): { buf: Uint8Array; offsets: number[] } {
  const payloads = events.map((e) => encodeEvent(e));
  const buf = new Uint8Array(SEGMENT_HEADER_BYTES + payloads.reduce((n, p) => n + 8 + p.length, 0));
  buf.set(segmentHeader(start), 0);
  const offsets: number[] = [];
  let off = SEGMENT_HEADER_BYTES;
  for (const p of payloads) {
    offsets.push(off);
    off = frameRecord(p, buf, off);
  }
  return { buf, offsets };
}

const logged: { level: string; obj: unknown; msg: string | undefined }[] = [];
const opts: StoreOptions = {
  clock: () => 1,
  logger: {
    warn: (obj, msg) => logged.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => logged.push({ level: 'error', obj, msg }),
  },
};

describe('classifyTail', () => {
  const { buf, offsets } = segment(1, [declare(1), declare(2), declare(3)]);
  const last = offsets[2]!;

  it('a partial header, a record cut short, or zeros to the end: torn', async () => {
    expect((await classifyTail(new BufferSource(buf.subarray(0, last + 5)), last)).kind).toBe('torn');
    expect((await classifyTail(new BufferSource(buf.subarray(0, buf.length - 1)), last)).kind).toBe('torn');
    const zeros = new Uint8Array(buf.length + 4096);
    zeros.set(buf.subarray(0, last));
    expect(await classifyTail(new BufferSource(zeros), last)).toMatchObject({
      kind: 'torn',
      reason: expect.stringMatching(/zero/),
    });
  });

  it('a bad record followed by a valid one, a whole record with a bad checksum, an impossible length: corruption', async () => {
    const flipped = Uint8Array.from(buf);
    flipped[offsets[1]! + 9]! ^= 1;
    expect(await classifyTail(new BufferSource(flipped), offsets[1]!)).toMatchObject({
      kind: 'corrupt',
      validAfter: 1,
    });
    const lastFlipped = Uint8Array.from(buf);
    lastFlipped[buf.length - 1]! ^= 1;
    expect(await classifyTail(new BufferSource(lastFlipped), last)).toMatchObject({
      kind: 'corrupt',
      validAfter: 0,
    });
    const garbage = Uint8Array.from(buf);
    garbage.fill(0xff, last, last + 4);
    expect(await classifyTail(new BufferSource(garbage), last)).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringMatching(/impossible/),
    });
  });

  it('countRecords counts the valid records around damaged stretches', async () => {
    const damaged = Uint8Array.from(buf);
    damaged.fill(0xab, offsets[1]! + 2, offsets[1]! + 6);
    expect(await countRecords(new BufferSource(damaged), SEGMENT_HEADER_BYTES)).toEqual({
      valid: 2,
      damaged: 1,
    });
  });
});

describe('openStore on damage', () => {
  it('removes a last segment torn while it was being created, and carries on', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, segmentName(1)), segment(1, [declare(1), declare(2)]).buf);
    await writeFile(join(dir, segmentName(3)), segmentHeader(3).subarray(0, 7));
    const s = await openStore(dir, opts);
    expect(s.stats()).toMatchObject({ index: 2, truncatedBytes: 7 });
    await s.commitDurable(declare(3));
    await s.close();
    const again = await openStore(dir, opts);
    expect(again.stats().index).toBe(3);
    await again.close();
  });

  it('a gap in the log is corruption; repair keeps the log before it', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, segmentName(1)), segment(1, [declare(1), declare(2)]).buf);
    await writeFile(join(dir, segmentName(5)), segment(5, [declare(5)]).buf);
    await expect(openStore(dir, opts)).rejects.toMatchObject({
      name: 'StoreCorruptionError',
      file: join(dir, segmentName(5)),
      offset: 0,
    });
    const s = await openStore(dir, { ...opts, repair: true });
    expect(s.stats()).toMatchObject({ index: 2, repairDroppedRecords: 1 });
    await s.close();
    expect(await readdir(dir)).toEqual([segmentName(1), 'quarantine']);
  });

  it('repair of an unreadable snapshot whose log starts after it sets everything aside and says so', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'snapshot.bin'), bytes('not a snapshot at all, 24+ bytes long'));
    await writeFile(join(dir, segmentName(7)), segment(7, [declare(7), declare(8)]).buf);
    await expect(openStore(dir, opts)).rejects.toMatchObject({ name: 'StoreCorruptionError', offset: 0 });
    logged.length = 0;
    const s = await openStore(dir, { ...opts, repair: true });
    expect(s.stats()).toMatchObject({ index: 0, repairDroppedRecords: 2 });
    await s.close();
    const report = logged.find((l) => l.msg?.startsWith('store repaired'));
    expect(report?.msg).toBe(
      'store repaired: dropped 2 log record(s) and the snapshot; starting from event 0',
    );
    const [stamp] = await readdir(join(dir, 'quarantine'));
    expect((await readdir(join(dir, 'quarantine', stamp!))).sort()).toEqual([segmentName(7), 'snapshot.bin']);
  });

  it('a record with a good checksum that is not an event is corruption at its offset', async () => {
    const dir = await tempDir();
    const payloads = [encodeEvent(declare(1)), bytes('\u00ff\u00ff not an event')];
    const buf = new Uint8Array(SEGMENT_HEADER_BYTES + payloads.reduce((n, p) => n + 8 + p.length, 0));
    buf.set(segmentHeader(1), 0);
    let off = SEGMENT_HEADER_BYTES;
    for (const p of payloads) off = frameRecord(p, buf, off);
    await writeFile(join(dir, segmentName(1)), buf);
    await expect(openStore(dir, opts)).rejects.toMatchObject({
      name: 'StoreCorruptionError',
      offset: SEGMENT_HEADER_BYTES + 8 + payloads[0]!.length,
    });
    const s = await openStore(dir, { ...opts, repair: true });
    expect(s.stats()).toMatchObject({ index: 1, repairDroppedRecords: 1 });
    await s.close();
    expect((await readFile(join(dir, segmentName(1)))).length).toBe(
      SEGMENT_HEADER_BYTES + 8 + payloads[0]!.length,
    );
  });
});
