/**
 * Power loss, not just kill -9, for a cluster member's Raft storage: the real FileStorage runs on
 * PowerLossFs, which keeps only what was synced (file data after datasync/sync, directory entries
 * after the directory's sync). A run persists Readys with entries, conflicting suffixes, hard
 * states (term, vote) and snapshots (compaction and installs); the power is cut at every file
 * operation of that run, the storage reopens on what survived, and:
 * - every Ready whose `persist` resolved is there in full (entries, snapshot, term and vote);
 * - the vote record never goes back (a member must not vote twice in one term);
 * - what is there is the state after the durable Readys plus a prefix of the one in flight;
 * - a power loss is never mistaken for damage (no quarantine), also with a torn last write.
 */
import { describe, expect, it } from 'vitest';
import { FileStorage } from '../../../src/cluster-broker/replication/file-storage.js';
import type {
  Entry,
  HardState,
  InitialState,
  PersistOps,
} from '../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../src/cluster-broker/replication/raft/types.js';
import { persistToOps, StoreImage } from '../../../src/cluster-broker/replication/store-image.js';
import { seededRandom } from '../../../src/common/random.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';

const DIR = '/power-loss/member';

const entry = (index: number, term: number): Entry => ({
  index,
  term,
  data: index % 7 === 0 ? null : new TextEncoder().encode(`${index}@${term}:${'x'.repeat(40)}`),
});
const range = (from: number, to: number, term: number): Entry[] =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, term));
const snapshot = (index: number, term: number) => ({
  index,
  term,
  data: new TextEncoder().encode(`state as of ${index}`),
});

/** What a member's core hands its storage over a life: follower appends, elections, conflicts, compaction, an installed snapshot. */
const READYS: PersistOps[] = [
  { entries: range(1, 3, 1) },
  { hardState: { term: 1, vote: 'n2' }, entries: range(4, 5, 1) },
  { entries: range(6, 10, 1) },
  { hardState: { term: 2, vote: null }, truncateFrom: 8, entries: [] },
  { entries: range(8, 9, 2) },
  { snapshot: snapshot(5, 1), entries: range(10, 12, 2) },
  { hardState: { term: 3, vote: 'n1' }, entries: [] },
  { entries: range(10, 11, 3) },
  { entries: range(12, 18, 3) },
  { hardState: { term: 4, vote: 'n3' }, snapshot: snapshot(30, 4), entries: [] },
  { entries: range(31, 34, 4) },
  { entries: [entry(35, 4)] },
  { snapshot: snapshot(33, 4), entries: range(36, 40, 4) },
  { hardState: { term: 5, vote: 'n3' }, entries: range(41, 41, 5) },
];

const open = (fs: PowerLossFs) => FileStorage.open({ dir: DIR, clusterId: 'c1', memberId: 'n1', fs });

interface Run {
  /** Readys whose persist resolved (a prefix of READYS). */
  acked: number;
  /** Readys whose persist started (acked, or acked + 1 when the power went during one). */
  started: number;
}

async function workload(fs: PowerLossFs): Promise<Run> {
  const run: Run = { acked: 0, started: 0 };
  let storage: FileStorage;
  try {
    storage = await open(fs);
  } catch {
    return run; // the power went while opening
  }
  try {
    for (const r of READYS) {
      run.started++;
      await storage.persist(r);
      run.acked++;
    }
    await storage.close();
  } catch {
    // the power went
  }
  return run;
}

function describeState(s: InitialState): string {
  const hs = s.hardState;
  const entries = s.entries.map(
    (e) => `${e.index}@${e.term}${e.data ? `:${Buffer.from(e.data).toString('hex')}` : ''}`,
  );
  const snap = s.snapshot
    ? `${s.snapshot.index}@${s.snapshot.term}:${Buffer.from(snapshotBytes(s.snapshot.data)).toString('hex')}`
    : '-';
  return JSON.stringify([hs.term, hs.vote, hs.recovering ?? null, snap, entries]);
}

/** Every state a restart may find: the durable Readys, then any prefix of the one in flight. */
function allowedStates(run: Run): Set<string> {
  const image = new StoreImage();
  image.hardState = { term: 0, vote: null, recovering: 'blank' };
  for (const r of READYS.slice(0, run.acked)) image.applyPersist(r);
  const allowed = new Set<string>();
  const snap = () => {
    const copy = new StoreImage();
    copy.hardState = image.hardState;
    copy.snapshot = image.snapshot;
    copy.base = { ...image.base };
    copy.entries = [...image.entries];
    allowed.add(describeState(copy.toInitialState()));
  };
  snap();
  if (run.started > run.acked) {
    for (const op of persistToOps(READYS[run.acked]!)) {
      image.apply(op);
      snap();
    }
  }
  return allowed;
}

function ackedHardState(run: Run): HardState {
  let hs: HardState = { term: 0, vote: null };
  for (const r of READYS.slice(0, run.acked)) if (r.hardState) hs = r.hardState;
  return hs;
}

/** Reopens on what survived and checks the promises. */
async function recoverAndCheck(survivor: PowerLossFs, run: Run, label: string): Promise<FileStorage> {
  const storage = await open(survivor);
  expect(storage.damage, `${label}: a power loss taken for damage`).toBeUndefined();
  const init = storage.initialState();
  const acked = ackedHardState(run);
  expect(init.hardState.term, `${label}: the term went back`).toBeGreaterThanOrEqual(acked.term);
  if (init.hardState.term === acked.term && acked.vote !== null) {
    expect(init.hardState.vote, `${label}: the vote went back`).toBe(acked.vote);
  }
  const allowed = allowedStates(run);
  expect(
    allowed.has(describeState(init)),
    `${label}: recovered ${describeState(init)}, not the durable Readys (${run.acked}) plus a prefix of the next`,
  ).toBe(true);
  return storage;
}

async function fullRunOps(): Promise<string[]> {
  const fs = new PowerLossFs();
  const run = await workload(fs);
  expect(run.acked).toBe(READYS.length);
  return fs.ops;
}

/**
 * Cuts the power at each operation of a full run in turn, restarts on what survived (the last
 * write torn by `tear` when given) and checks the promises; `seen` looks at each restart.
 */
async function crashAtEveryOp(
  tear: ((lastWriteBytes: number) => number) | undefined,
  seen: (run: Run, storage: FileStorage) => void,
): Promise<string[]> {
  const ops = await fullRunOps();
  for (let at = 1; at <= ops.length; at++) {
    const fs = new PowerLossFs({ crashAtOp: at });
    const run = await workload(fs);
    expect(fs.powerLost).toBe(true);
    const label = `power lost at op ${at} (${ops[at - 1]})${tear ? ', last write torn' : ''}`;
    const storage = await recoverAndCheck(fs.survivor(tear), run, label);
    seen(run, storage);
    await storage.close();
  }
  return ops;
}

describe('Raft file storage across a power loss', () => {
  it('loses no durable Ready and never takes back a vote when the power goes at any file operation', async () => {
    let lostInFlight = 0;
    const ops = await crashAtEveryOp(undefined, (run) => {
      if (run.started > run.acked) lostInFlight++;
    });
    // the run exercises log appends, atomic replacements of meta.json and snapshot, compaction
    expect(ops.filter((o) => o === `write ${DIR}/log`).length).toBeGreaterThan(5);
    expect(ops.some((o) => o.startsWith('rename ') && o.endsWith('/snapshot'))).toBe(true);
    expect(ops.some((o) => o.startsWith('rename ') && o.endsWith('/log'))).toBe(true);
    expect(lostInFlight, 'no crash point fell inside a persist').toBeGreaterThan(0);
  }, 240_000);

  it('opens after a torn last write at any crash point, cutting the tail and keeping every durable Ready', async () => {
    const rand = seededRandom(41);
    let cut = 0;
    await crashAtEveryOp(
      (len) => Math.floor(rand() * len),
      (_run, storage) => {
        cut += storage.truncatedBytes;
      },
    );
    expect(cut, 'no crash point left a torn tail to cut').toBeGreaterThan(0);
  }, 240_000);

  it('survives a second power loss during recovery (seeded, bounded)', async () => {
    const ops = await fullRunOps();
    const rand = seededRandom(7);
    for (let trial = 0; trial < 60; trial++) {
      const first = new PowerLossFs({ crashAtOp: 1 + Math.floor(rand() * ops.length) });
      const run = await workload(first);
      const frac = rand();
      const tear = (len: number) => Math.floor(frac * len);
      // count the second life's operations (recovery, then a clean close), then cut it at one
      const probe = first.survivor(tear);
      await (await recoverAndCheck(probe, run, `trial ${trial} probe`)).close();
      const second = first.survivor(tear, { crashAtOp: 1 + Math.floor(rand() * probe.ops.length) });
      await open(second)
        .then((s) => s.close())
        .catch(() => {});
      second.cutPower();
      const label = `trial ${trial}: power lost again while recovering`;
      await (await recoverAndCheck(second.survivor(), run, label)).close();
    }
  }, 240_000);
});
