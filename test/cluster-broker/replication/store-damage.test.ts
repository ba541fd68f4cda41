/**
 * FileStorage under a damaged disk (issue 10, item 2): a torn tail is cut; any other damage of the
 * log, the vote record (meta.json) or the snapshot is corruption: the files go to quarantine, the
 * intact part is kept and the member restarts recovering, never silently.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStorage } from '../../../src/cluster-broker/replication/file-storage.js';
import type { Entry } from '../../../src/cluster-broker/replication/raft/types.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'quorate-damage-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const e = (index: number, term: number): Entry => ({
  index,
  term,
  data: new TextEncoder().encode(`value-${index}`),
});
const open = (dir: string) =>
  FileStorage.open({ dir, clusterId: 'c1', memberId: 'n1', quarantineDir: path.join(dir, 'q') });
const lastIndex = (s: FileStorage) => s.initialState().entries.at(-1)?.index ?? 0;

/** A store with term 3, vote n2 and entries 1..6; returns its dir and the log bytes. */
async function written(): Promise<{ dir: string; log: Buffer }> {
  const dir = tmp();
  const s = await open(dir);
  await s.persist({ hardState: { term: 3, vote: 'n2' }, entries: [e(1, 1), e(2, 1), e(3, 2)] });
  await s.persist({ entries: [e(4, 3), e(5, 3), e(6, 3)] });
  await s.close();
  return { dir, log: readFileSync(path.join(dir, 'log')) };
}

function quarantined(dir: string): string[] {
  const q = path.join(dir, 'q');
  if (!existsSync(q)) return [];
  return readdirSync(q).flatMap((t) => readdirSync(path.join(q, t)).map((f) => `${f}`));
}

describe('replication store damage', () => {
  it('a new store is blank; a reopened intact one is not damaged', async () => {
    const dir = tmp();
    const s = await open(dir);
    expect(s.initialState().hardState.recovering).toBe('blank');
    await s.persist({ hardState: { term: 1, vote: null }, entries: [] });
    await s.close();
    const r = await open(dir);
    expect(r.initialState().hardState).toEqual({ term: 1, vote: null });
    expect(r.damage).toBeUndefined();
    await r.close();
  });

  it('every single flipped byte of the log is corruption: quarantined, the intact prefix kept, recovering', async () => {
    const { dir: original, log } = await written();
    const meta = readFileSync(path.join(original, 'meta.json'));
    for (let at = 0; at < log.length; at++) {
      const dir = tmp();
      const bad = Buffer.from(log);
      bad[at] = bad[at]! ^ 0x40;
      writeFileSync(path.join(dir, 'log'), bad);
      writeFileSync(path.join(dir, 'meta.json'), meta);
      const s = await open(dir);
      const init = s.initialState();
      expect(s.damage?.file, `byte ${at}`).toBe('log');
      expect(init.hardState).toEqual({ term: 3, vote: 'n2', recovering: 'damaged' });
      expect(lastIndex(s)).toBeLessThan(6);
      expect(quarantined(dir).sort()).toEqual(['log', 'meta.json']);
      await s.close();
      // the kept prefix was written back intact: a second start finds no new damage, still recovering
      const again = await open(dir);
      expect(again.damage).toBeUndefined();
      expect(again.initialState().hardState.recovering).toBe('damaged');
      expect(lastIndex(again)).toBe(lastIndex(s));
      await again.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a log cut anywhere (a crash mid-append) is a torn tail: cut, not damage', async () => {
    const { dir: original, log } = await written();
    const meta = readFileSync(path.join(original, 'meta.json'));
    for (let len = log.length - 1; len > 0; len -= 7) {
      const dir = tmp();
      writeFileSync(path.join(dir, 'log'), log.subarray(0, len));
      writeFileSync(path.join(dir, 'meta.json'), meta);
      const s = await open(dir);
      expect(s.damage, `cut at ${len}`).toBeUndefined();
      expect(s.initialState().hardState).toEqual({ term: 3, vote: 'n2' });
      expect(quarantined(dir)).toEqual([]);
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // zeros where the file grew but the data never landed: torn too
    const dir = tmp();
    writeFileSync(path.join(dir, 'log'), Buffer.concat([log, Buffer.alloc(300)]));
    writeFileSync(path.join(dir, 'meta.json'), meta);
    const s = await open(dir);
    expect(s.damage).toBeUndefined();
    expect(s.truncatedBytes).toBe(300);
    expect(lastIndex(s)).toBe(6);
    await s.close();
  });

  it('a corrupt vote record: quarantined, no vote remembered, term from the log, recovering', async () => {
    const { dir } = await written();
    const metaPath = path.join(dir, 'meta.json');
    // a flipped digit still parses as JSON: only the checksum tells
    writeFileSync(metaPath, readFileSync(metaPath, 'utf8').replace('"term":3', '"term":2'));
    const s = await open(dir);
    expect(s.damage?.file).toBe('meta.json');
    expect(s.initialState().hardState).toEqual({ term: 3, vote: null, recovering: 'damaged' });
    expect(lastIndex(s)).toBe(6);
    await s.close();
    writeFileSync(metaPath, '{"clusterId":"c1","memb');
    const r = await open(dir);
    expect(r.damage?.file).toBe('meta.json');
    expect(r.initialState().hardState.vote).toBeNull();
    await r.close();
  });

  it('a term of 2^53 in the vote record is damage, never adopted', async () => {
    const { dir } = await written();
    const metaPath = path.join(dir, 'meta.json');
    const m = JSON.parse(readFileSync(metaPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(metaPath, JSON.stringify({ ...m, term: 2 ** 53 }));
    const s = await open(dir);
    expect(s.damage?.reason).toMatch(/safe integer/);
    expect(s.initialState().hardState.term).toBe(3);
    await s.close();
  });

  it('a bad snapshot: quarantined with the log it anchors, recovering from nothing', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ hardState: { term: 2, vote: 'n1' }, entries: [e(1, 1), e(2, 2), e(3, 2)] });
    await s.persist({ snapshot: { index: 2, term: 2, data: new Uint8Array([7, 7, 7]) }, entries: [] });
    await s.close();
    const snapPath = path.join(dir, 'snapshot');
    const snap = readFileSync(snapPath);
    snap[snap.length - 1] = snap[snap.length - 1]! ^ 1;
    writeFileSync(snapPath, snap);
    const r = await open(dir);
    expect(r.damage?.file).toBe('snapshot');
    expect(r.initialState().snapshot).toBeUndefined();
    expect(r.initialState().entries).toEqual([]);
    expect(r.initialState().hardState).toEqual({ term: 2, vote: 'n1', recovering: 'damaged' });
    expect(quarantined(dir).sort()).toEqual(['log', 'meta.json', 'snapshot']);
    await r.close();
  });

  it('a log without its vote record is damage, not a new store', async () => {
    const { dir } = await written();
    rmSync(path.join(dir, 'meta.json'));
    const s = await open(dir);
    expect(s.damage?.file).toBe('meta.json');
    expect(s.initialState().hardState.recovering).toBe('damaged');
    await s.close();
  });

  it('a vote record without its log is damage: the entries it acknowledged are gone', async () => {
    const { dir } = await written();
    rmSync(path.join(dir, 'log'));
    const s = await open(dir);
    expect(s.damage?.file).toBe('log');
    expect(s.initialState().hardState).toEqual({ term: 3, vote: 'n2', recovering: 'damaged' });
    await s.close();
  });

  it('a log that starts after a snapshot which is gone is damage, not a log from index 1', async () => {
    const dir = tmp();
    const s = await open(dir);
    await s.persist({ hardState: { term: 2, vote: 'n1' }, entries: [e(1, 1), e(2, 2), e(3, 2)] });
    await s.persist({ snapshot: { index: 2, term: 2, data: new Uint8Array([7, 7, 7]) }, entries: [] });
    await s.close();
    rmSync(path.join(dir, 'snapshot'));
    const r = await open(dir);
    expect(r.damage?.file).toBe('snapshot');
    expect(r.initialState().entries).toEqual([]);
    expect(r.initialState().hardState.recovering).toBe('damaged');
    await r.close();
  });
});
