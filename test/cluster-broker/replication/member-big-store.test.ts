/**
 * A cluster member's Raft storage past 2 GiB, through the power-loss file system holding files
 * as repeated units (test/support/power-loss-fs.ts `placeRepeated`): its `readFile` refuses a file
 * past 2 GiB as node's does, so these pass only if FileStorage reads its log and its snapshot in
 * chunks. And the record limit: an entry past it is refused before it is proposed.
 */
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../../src/cluster-broker/files/crc32.js';
import { RecordTooLargeError } from '../../../src/cluster-broker/files/errors.js';
import { FileStorage } from '../../../src/cluster-broker/replication/file-storage.js';
import {
  assertEntryFits,
  baseRecord,
  entryRecord,
  MAX_ENTRY_DATA_BYTES,
  truncateRecord,
} from '../../../src/cluster-broker/replication/log-records.js';
import type { Entry } from '../../../src/cluster-broker/replication/raft/types.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';

const DIR = '/big/member';
const LOG = `${DIR}/log`;
const SNAPSHOT = `${DIR}/snapshot`;
const UNIT = new Uint8Array(8 * 1024 * 1024).fill(7);
/** Units of a big file: past 2 GiB. */
const REPEATS = 260;
const TWO_GIB = 2 ** 31;
const quiet = { dir: DIR, clusterId: 'c', memberId: 'n1', logger: {} };

const small = (index: number, term = 1): Entry => ({ index, term, data: new Uint8Array([index, term]) });

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A member's store on a fresh disk: meta.json written by FileStorage itself (term 1, no vote). */
async function memberDisk(): Promise<PowerLossFs> {
  const fs = new PowerLossFs();
  const s = await FileStorage.open({ ...quiet, fs });
  await s.persist({ hardState: { term: 1, vote: null }, entries: [] });
  await s.close();
  return fs;
}

describe("a cluster member's store past 2 GiB (read in chunks)", () => {
  it('opens and recovers a log past 2 GiB, and appends to it', { timeout: 300_000 }, async () => {
    const fs = await memberDisk();
    // each unit appends an 8 MiB entry 1 and cuts it again: the log grows, the entries do not
    const unit = concat([entryRecord({ index: 1, term: 1, data: UNIT }), truncateRecord(1)]);
    fs.placeRepeated(
      LOG,
      [
        { unit: baseRecord(0, 0), times: 1 },
        { unit, times: REPEATS },
      ],
      concat([1, 2, 3].map((i) => entryRecord(small(i)))),
    );
    expect(fs.sizeOf(LOG)).toBeGreaterThan(TWO_GIB);
    await expect(fs.readFile(LOG)).rejects.toThrow(/greater than 2 GiB/);

    const s = await FileStorage.open({ ...quiet, fs });
    expect(s.damage).toBeUndefined();
    expect(s.truncatedBytes).toBe(0);
    expect(s.initialState().entries).toEqual([small(1), small(2), small(3)]);
    expect(s.initialState().hardState.term).toBe(1);
    await s.persist({ entries: [small(4)] });
    await s.close();
    expect(fs.sizeOf(LOG)).toBeGreaterThan(TWO_GIB); // appended to, not rewritten

    const again = await FileStorage.open({ ...quiet, fs });
    expect(again.damage).toBeUndefined();
    expect(again.initialState().entries.map((e) => e.index)).toEqual([1, 2, 3, 4]);
    await again.close();
  });

  it('opens a snapshot past 2 GiB, its checksum taken over every chunk', { timeout: 300_000 }, async () => {
    const fs = await memberDisk();
    const head = Buffer.alloc(20);
    head.writeDoubleBE(9, 4);
    head.writeDoubleBE(1, 12);
    let crc = crc32(head.subarray(4));
    for (let i = 0; i < REPEATS; i++) crc = crc32(UNIT, crc);
    head.writeUInt32BE(crc, 0);
    fs.placeRepeated(SNAPSHOT, [
      { unit: head, times: 1 },
      { unit: UNIT, times: REPEATS },
    ]);
    fs.placeRepeated(LOG, [{ unit: baseRecord(9, 1), times: 1 }], entryRecord(small(10)));
    expect(fs.sizeOf(SNAPSHOT)).toBeGreaterThan(TWO_GIB);

    const s = await FileStorage.open({ ...quiet, fs });
    expect(s.damage).toBeUndefined();
    const snap = s.initialState().snapshot!;
    expect(snap.index).toBe(9);
    expect(snap.term).toBe(1);
    const data = snap.data as Uint8Array;
    expect(data.length).toBe(REPEATS * UNIT.length);
    expect(data[0]).toBe(7);
    expect(data[data.length - 1]).toBe(7);
    expect(s.initialState().entries).toEqual([small(10)]);
    await s.close();
  });
});

describe('the record limit of the member log', () => {
  it('refuses entry data past MAX_ENTRY_DATA_BYTES with RecordTooLargeError', () => {
    expect(() => assertEntryFits(new Uint8Array(MAX_ENTRY_DATA_BYTES + 1))).toThrow(RecordTooLargeError);
    expect(() => assertEntryFits(new Uint8Array(MAX_ENTRY_DATA_BYTES))).not.toThrow();
    expect(() => assertEntryFits(null)).not.toThrow();
  });
});
