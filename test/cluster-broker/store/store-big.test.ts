/**
 * Stores past 2 GiB, through the power-loss file system holding a segment of repeated records
 * (test/support/power-loss-fs.ts `placeRepeated`): its `readFile` refuses a file past 2 GiB as
 * node's does, so these pass only if recovery, compaction and repair read in chunks. And the
 * record limit: an event past it is refused at write time and never written.
 */
import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent, EnqueueEvent } from '../../../src/cluster-broker/core/events.js';
import { RecordTooLargeError } from '../../../src/cluster-broker/files/errors.js';
import { MAX_RECORD_BYTES } from '../../../src/cluster-broker/files/record-bytes.js';
import { StoreCorruptionError } from '../../../src/cluster-broker/store/errors.js';
import { openStore, type StoreOptions } from '../../../src/cluster-broker/store/event-store.js';
import { frameRecord } from '../../../src/cluster-broker/store/record-format.js';
import { segmentHeader } from '../../../src/cluster-broker/store/segment-header.js';
import { segmentName } from '../../../src/cluster-broker/store/segments.js';
import { readSnapshotFile, SNAPSHOT_FILE } from '../../../src/cluster-broker/store/snapshot-file.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';

const DIR = '/big/data';
const SEGMENT = `${DIR}/${segmentName(1)}`;
const BODY = new Uint8Array(8 * 1024 * 1024).fill(7);
/** Units of the big segment: past 2 GiB. */
const REPEATS = 260;
const TWO_GIB = 2 ** 31;

function records(events: readonly BrokerEvent[]): Uint8Array {
  const payloads = events.map((e) => encodeEvent(e));
  const out = new Uint8Array(payloads.reduce((n, p) => n + 8 + p.length, 0));
  let at = 0;
  for (const p of payloads) at = frameRecord(p, out, at);
  return out;
}

/** One unit: an 8 MiB message that has expired, and the expire that drops it (the state stays small). */
const CHURN_UNIT = records([
  { type: 'enqueue', leaderTime: 1, queue: 'churn', message: BODY, expiresAt: 2 },
  { type: 'expire', leaderTime: 3 },
]);
const live = (i: number): EnqueueEvent => ({
  type: 'enqueue',
  leaderTime: 4,
  queue: 'live',
  message: new Uint8Array([i, i, i]),
});
const HEAD = records([
  { type: 'declare', leaderTime: 1, queue: 'churn', options: {} },
  { type: 'declare', leaderTime: 1, queue: 'live', options: {} },
]);
const LIVE_TAIL = records([live(1), live(2), live(3)]);
/** Events in the big segment. */
const EVENTS = 2 + 2 * REPEATS + 3;

/** A fresh disk holding one segment past 2 GiB: header, declares, REPEATS churn units, 3 live messages. */
function bigStore(damagedUnitAt?: number): PowerLossFs {
  const fs = new PowerLossFs();
  void fs.mkdir(DIR);
  const head = new Uint8Array(16 + HEAD.length);
  head.set(segmentHeader(1), 0);
  head.set(HEAD, 16);
  if (damagedUnitAt === undefined) {
    fs.placeRepeated(
      SEGMENT,
      [
        { unit: head, times: 1 },
        { unit: CHURN_UNIT, times: REPEATS },
      ],
      LIVE_TAIL,
    );
    return fs;
  }
  // the expire record's checksum of one unit in the middle damaged: valid records follow it
  const bad = CHURN_UNIT.slice();
  bad[bad.length - 6]! ^= 0x40;
  fs.placeRepeated(
    SEGMENT,
    [
      { unit: head, times: 1 },
      { unit: CHURN_UNIT, times: damagedUnitAt },
      { unit: bad, times: 1 },
      { unit: CHURN_UNIT, times: REPEATS - damagedUnitAt - 1 },
    ],
    LIVE_TAIL,
  );
  return fs;
}

const quiet: StoreOptions = { clock: () => 10, logger: {} };

describe('a store past 2 GiB (read in chunks)', () => {
  it('opens and recovers a segment past 2 GiB, and appends to it', { timeout: 300_000 }, async () => {
    const fs = bigStore();
    expect(fs.sizeOf(SEGMENT)).toBeGreaterThan(TWO_GIB);
    await expect(fs.readFile(SEGMENT)).rejects.toThrow(/greater than 2 GiB/);
    // no compaction: the reopen below must read the big segment again
    const opts: StoreOptions = { ...quiet, fs, holdCompaction: () => true };
    const store = await openStore(DIR, opts);
    expect(store.stats().recoveredEvents).toBe(EVENTS);
    expect(store.state.queueInfo('live')?.depth).toBe(3);
    expect(store.state.queueInfo('churn')?.depth).toBe(0);
    await store.commitDurable(live(4));
    await store.close();
    const again = await openStore(DIR, opts);
    expect(again.stats().recoveredEvents).toBe(EVENTS + 1);
    expect(again.state.queueInfo('live')?.depth).toBe(4);
    await again.close();
  });

  it('compacts a segment past 2 GiB: snapshot, the segment deleted, recovery equal', {
    timeout: 300_000,
  }, async () => {
    const fs = bigStore();
    const store = await openStore(DIR, { ...quiet, fs });
    await store.commitDurable(live(4)); // the first write finds the log past segmentBytes
    await store.close(); // waits for the compaction
    expect(store.stats().snapshotsWritten).toBe(1);
    expect(fs.sizeOf(SEGMENT)).toBeUndefined();
    const again = await openStore(DIR, { ...quiet, fs });
    expect(again.stats().recoveredSnapshotIndex).toBeGreaterThanOrEqual(EVENTS);
    expect(again.state.queueInfo('live')?.depth).toBe(4);
    await again.close();
  });

  it('refuses, then with repair sets aside, damage in the middle of a segment past 2 GiB', {
    timeout: 300_000,
  }, async () => {
    const fs = bigStore(3);
    const err = await openStore(DIR, { ...quiet, fs }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreCorruptionError);
    const damageAt = 16 + HEAD.length + 4 * CHURN_UNIT.length - 18;
    expect((err as StoreCorruptionError).offset).toBe(damageAt);
    expect(fs.sizeOf(SEGMENT)).toBeGreaterThan(TWO_GIB); // nothing changed on disk

    const store = await openStore(DIR, { ...quiet, fs, repair: true });
    // the records before the damaged one: declares, 3 units, the damaged unit's enqueue
    expect(store.stats().index).toBe(2 + 2 * 3 + 1);
    expect(store.stats().repairDroppedRecords).toBe(1 + 2 * (REPEATS - 4) + 3);
    expect(fs.sizeOf(SEGMENT)).toBe(damageAt);
    await store.close();
  });

  it('reads a snapshot file past 2 GiB in chunks (a wrong length is damage, not a crash)', async () => {
    const fs = new PowerLossFs();
    await fs.mkdir(DIR);
    const header = new Uint8Array(24);
    header.set([0x51, 0x53, 0x46, 0x31], 0);
    const view = new DataView(header.buffer);
    view.setFloat64(4, 5, true);
    view.setFloat64(12, 1000, true); // says 1000 state bytes; the file holds 2 GiB more
    fs.placeRepeated(`${DIR}/${SNAPSHOT_FILE}`, [
      { unit: header, times: 1 },
      { unit: BODY, times: 260 },
    ]);
    const err = await readSnapshotFile(DIR, fs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreCorruptionError);
    expect((err as StoreCorruptionError).reason).toBe(
      `the snapshot says 1000 state bytes, the file holds ${260 * BODY.length}`,
    );
  });
});

describe('the record limit on write', () => {
  it('refuses an event past MAX_RECORD_BYTES with RecordTooLargeError; nothing written, the store goes on', async () => {
    const fs = new PowerLossFs();
    const store = await openStore(DIR, { ...quiet, fs });
    await store.commitDurable({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    const before = fs.sizeOf(`${DIR}/${segmentName(1)}`);
    const mib = new Uint8Array(1024 * 1024);
    // a transaction of 1025 x 1 MiB (one buffer shared): its record would be past 1 GiB
    const events = Array.from(
      { length: MAX_RECORD_BYTES / mib.length + 1 },
      (): EnqueueEvent => ({ type: 'enqueue', leaderTime: 2, queue: 'q', message: mib }),
    );
    expect(() => store.commit({ type: 'commit', leaderTime: 2, events })).toThrow(RecordTooLargeError);
    expect(store.state.queueInfo('q')?.depth).toBe(0);
    await store.commitDurable({ type: 'enqueue', leaderTime: 3, queue: 'q', message: new Uint8Array(3) });
    await store.close();
    const written = fs.sizeOf(`${DIR}/${segmentName(1)}`)! - before!;
    expect(written).toBeLessThan(1024);
    const again = await openStore(DIR, { ...quiet, fs });
    expect(again.state.queueInfo('q')?.depth).toBe(1);
    expect(again.stats().index).toBe(2);
    await again.close();
  });
});
