import { describe, expect, it } from 'vitest';
import { crc32 } from '../../../src/cluster-broker/files/crc32.js';
import {
  entryRecord,
  entryRecordSize,
  parseLog,
  truncateRecord,
  writeEntryRecord,
} from '../../../src/cluster-broker/replication/log-records.js';
import type { Entry } from '../../../src/cluster-broker/replication/raft/types.js';

const entries: Entry[] = [
  { index: 1, term: 1, data: null },
  { index: 2, term: 1, data: new Uint8Array([1, 2, 3]) },
  { index: 3, term: 2, data: new Uint8Array(1000).map((_, i) => (i * 7) & 0xff) },
];

describe('entry records', () => {
  it('written back to back at offsets, read back with both checksums good', () => {
    const size = 5 + entries.reduce((n, e) => n + entryRecordSize(e), 0);
    const out = Buffer.alloc(size);
    let at = 5; // not at the start of the buffer: the checksums cover the record's own ranges
    for (const e of entries) at = writeEntryRecord(out, at, e);
    expect(at).toBe(size);
    const parsed = parseLog(out.subarray(5));
    expect(parsed.damage).toBeUndefined();
    expect(parsed.ops).toEqual(entries.map((entry) => ({ kind: 'entry', entry })));
  });

  it('are the bytes entryRecord builds, and carry the standard checksums of body and header', () => {
    for (const e of entries) {
      const out = Buffer.alloc(entryRecordSize(e) + 3);
      writeEntryRecord(out, 3, e);
      const rec = out.subarray(3);
      expect(rec).toEqual(entryRecord(e));
      expect(rec.readUInt32BE(4)).toBe(crc32(rec.subarray(12)));
      expect(rec.readUInt32BE(8)).toBe(crc32(rec.subarray(0, 8)));
    }
  });

  it('a flipped byte anywhere in an entry record reads as damage', () => {
    const good = Buffer.concat([entryRecord(entries[2]!), truncateRecord(2)]);
    for (const at of [2, 6, 10, 12, 20, 40, 500]) {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ 0x10;
      expect(parseLog(bad).damage).toBeDefined();
    }
  });
});
