import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStorage } from '../../../src/cluster-broker/replication/file-storage.js';
import type { Entry } from '../../../src/cluster-broker/replication/raft/types.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'quorate-store-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const e = (index: number, term: number, s: string | null = `v${index}`): Entry => ({
  index,
  term,
  data: s === null ? null : new TextEncoder().encode(s),
});
const open = (dir: string, groupCommit = true) =>
  FileStorage.open({ dir, clusterId: 'c1', memberId: 'n1', groupCommit });
const indexes = (s: FileStorage) => s.initialState().entries.map((x) => `${x.index}@${x.term}`);

describe('replication file storage', () => {
  it('recovers term, vote and entries (no-ops included) after reopen', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ hardState: { term: 2, vote: 'n3' }, entries: [e(1, 1), e(2, 2, null)] });
    await s.persist({ entries: [e(3, 2)] });
    await s.close();
    const r = await open(dir);
    expect(r.initialState().hardState).toEqual({ term: 2, vote: 'n3' });
    expect(r.initialState().entries).toEqual([e(1, 1), e(2, 2, null), e(3, 2)]);
    await r.close();
  });

  it('replaces a conflicting suffix (entries at a lower index and truncateFrom)', async () => {
    const dir = tmp();
    const s = await open(dir, false);
    await s.persist({ entries: [e(1, 1), e(2, 1), e(3, 1)] });
    await s.persist({ entries: [e(2, 2), e(3, 2)] });
    await s.persist({ truncateFrom: 3, entries: [] });
    await s.close();
    const r = await open(dir);
    expect(indexes(r)).toEqual(['1@1', '2@2']);
    await r.close();
  });

  it('cuts a torn tail after a crash and keeps appending after it', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ entries: [e(1, 1), e(2, 1), e(3, 1)] });
    await s.close();
    const log = path.join(dir, 'log');
    truncateSync(log, statSync(log).size - 3); // the last record is torn
    const r = await open(dir);
    expect(indexes(r)).toEqual(['1@1', '2@1']);
    expect(r.truncatedBytes).toBeGreaterThan(0);
    await r.persist({ entries: [e(3, 2)] });
    await r.close();
    appendFileSync(log, Buffer.from([0, 0, 0, 40, 1, 2])); // garbage tail
    const r2 = await open(dir);
    expect(indexes(r2)).toEqual(['1@1', '2@1', '3@2']);
    await r2.close();
  });

  it('stops at a record whose CRC does not match', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ entries: [e(1, 1), e(2, 1), e(3, 1)] });
    await s.close();
    const log = path.join(dir, 'log');
    const buf = readFileSync(log);
    const recLen = 8 + 18 + 2; // header + entry body + 'v1'
    buf[recLen + 8 + 18] = buf[recLen + 8 + 18]! ^ 0xff; // flip a payload byte of record 2
    writeFileSync(log, buf);
    const r = await open(dir);
    expect(indexes(r)).toEqual(['1@1']);
    await r.close();
  });

  it('compacts the log prefix into a snapshot and recovers snapshot + suffix', async () => {
    const dir = tmp();
    const s = await open(dir);
    const many = Array.from({ length: 50 }, (_, i) => e(i + 1, 1));
    await s.persist({ entries: many });
    const before = statSync(path.join(dir, 'log')).size;
    await s.persist({ snapshot: { index: 40, term: 1, data: new Uint8Array([4, 0]) }, entries: [e(51, 2)] });
    await s.close();
    expect(statSync(path.join(dir, 'log')).size).toBeLessThan(before / 3);
    const r = await open(dir);
    const init = r.initialState();
    expect(init.snapshot).toEqual({ index: 40, term: 1, data: new Uint8Array([4, 0]) });
    expect(init.entries.map((x) => x.index)).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51]);
    await r.close();
  });

  it('drops a log that does not chain from an installed snapshot', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ entries: [e(1, 1), e(2, 1), e(3, 1)] });
    await s.persist({
      snapshot: { index: 2, term: 5, data: new Uint8Array([1]) },
      truncateFrom: 3,
      entries: [],
    });
    await s.persist({ entries: [e(3, 5)] });
    await s.close();
    const r = await open(dir);
    expect(r.initialState().snapshot?.index).toBe(2);
    expect(indexes(r)).toEqual(['3@5']);
    await r.close();
  });

  it('refuses a store of another cluster or member', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.close();
    await expect(FileStorage.open({ dir, clusterId: 'other', memberId: 'n1' })).rejects.toThrow(/cluster c1/);
    await expect(FileStorage.open({ dir, clusterId: 'c1', memberId: 'n2' })).rejects.toThrow(/member n1/);
  });

  it('does one fsync per Ready with group commit and one per entry without', async () => {
    const a = await open(tmp(), true);
    await a.persist({ entries: Array.from({ length: 20 }, (_, i) => e(i + 1, 1)) });
    expect(a.stats.fsyncs).toBe(1);
    await a.close();
    const b = await open(tmp(), false);
    await b.persist({ entries: Array.from({ length: 20 }, (_, i) => e(i + 1, 1)) });
    expect(b.stats.fsyncs).toBe(20);
    await b.close();
  });
});
