/**
 * Power loss, not just kill -9: the real event store runs on PowerLossFs, which keeps only what
 * was synced (file data after datasync, directory entries after the directory's fsync). The
 * power is cut at every file operation of a run (group commits, segment rolls, snapshots), the
 * store restarts on what survived, and:
 * - every event whose `durable` resolved is there;
 * - the recovered state is exactly the state after some prefix of the committed events (nothing
 *   half-applied, nothing reordered);
 * - recovery opens (a torn tail is cut, never refused), also when the last write is torn.
 */
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import {
  type EventStore,
  openStore,
  type StoreOptions,
} from '../../../src/cluster-broker/store/event-store.js';
import { readSnapshotFile, writeSnapshotFile } from '../../../src/cluster-broker/store/snapshot-file.js';
import { seededRandom } from '../../../src/common/random.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';
import { bytes } from '../core/helpers.js';

const DIR = '/power-loss/data';
const EVENTS = 60;

/** A queue fed and drained: most messages are consumed soon, so the log outgrows the live state and rolls. */
function events(n: number): BrokerEvent[] {
  const s = new BrokerState();
  const out: BrokerEvent[] = [];
  const push = (e: BrokerEvent) => {
    out.push(e);
    return s.apply(e);
  };
  push({ type: 'declare', leaderTime: 10, queue: 'q', options: {} });
  for (let i = 1; i < n; i++) {
    push({ type: 'enqueue', leaderTime: 10 + i, queue: 'q', message: bytes(`${i}:${'x'.repeat(60)}`) });
    if (i % 4 === 0) continue; // every 4th stays in the queue
    const got = push({ type: 'acquire', leaderTime: 10 + i, queue: 'q', consumer: 'c', max: 1 });
    const seqs = 'messages' in got ? got.messages.map((m) => m.seq) : [];
    push({ type: 'settle', leaderTime: 10 + i, consumer: 'c', seqs, outcome: { type: 'accepted' } });
    push({ type: 'release-consumer', leaderTime: 10 + i, consumer: 'c' });
  }
  return out;
}

const EVS = events(EVENTS);
/** Snapshot bytes of the state after the first k events, k = 0..EVS.length. */
const PREFIX_STATES: Uint8Array[] = (() => {
  const s = new BrokerState();
  const out = [s.snapshot()];
  for (const e of EVS) {
    s.apply(e);
    out.push(s.snapshot());
  }
  return out;
})();

function storeOptions(fs: PowerLossFs): StoreOptions {
  // small segments: a run rolls (new segment + snapshot + deletion) several times
  return { fs, clock: () => 1, segmentBytes: 1200, onFailure: () => {} };
}

interface Run {
  /** Highest event number (1-based, log order) whose durable promise resolved. */
  acked: number;
  /** Events committed (applied) before the power went. */
  committed: number;
}

/**
 * Commits EVS in bursts of 1..5 (several bursts share a group commit, some wait for `durable`)
 * until done or the power is lost. The store never waits for compaction, so rolls overlap commits.
 */
async function workload(fs: PowerLossFs, opts: StoreOptions): Promise<Run> {
  const run: Run = { acked: 0, committed: 0 };
  let store: EventStore;
  try {
    store = await openStore(DIR, opts);
  } catch {
    return run; // the power went while opening: nothing acknowledged
  }
  let n = 0;
  let burst = 0;
  while (n < EVS.length && !fs.powerLost) {
    const size = 1 + (burst % 5);
    for (let k = 0; k < size && n < EVS.length; k++) {
      const no = ++n;
      let c: ReturnType<EventStore['commit']>;
      try {
        c = store.commit(EVS[no - 1]!);
      } catch {
        n--;
        break;
      }
      run.committed = no;
      c.durable.then(
        () => {
          run.acked = Math.max(run.acked, no);
        },
        () => {},
      );
    }
    burst++;
    if (burst % 3 === 0) await store.flush().catch(() => {});
    else await new Promise((r) => setImmediate(r));
  }
  await store.flush().catch(() => {});
  await store.close().catch(() => {});
  return run;
}

/** Restarts on what survived and checks the promises; returns the recovered index. */
async function recoverAndCheck(survivor: PowerLossFs, run: Run, label: string): Promise<number> {
  const store = await openStore(DIR, { ...storeOptions(survivor), segmentBytes: 1 << 20 });
  const stats = store.stats();
  // the log may end with a release-all an earlier recovery appended (a consumer was left)
  const logIndex = stats.recoveredSnapshotIndex + stats.recoveredEvents;
  const recovered = Buffer.from(store.state.snapshot());
  let k = -1;
  for (const [evs, releaseAllInLog] of [
    [logIndex, false],
    [logIndex - 1, true],
  ] as const) {
    if (evs < 0 || evs > run.committed) continue;
    const expected = new BrokerState();
    expected.restore(PREFIX_STATES[evs]!);
    if (releaseAllInLog) expected.apply({ type: 'release-all', leaderTime: 1 });
    if (stats.index > logIndex) expected.apply({ type: 'release-all', leaderTime: 1 });
    if (recovered.equals(Buffer.from(expected.snapshot()))) {
      k = evs;
      break;
    }
  }
  expect(
    k,
    `${label}: the state is not the one after any prefix of the committed events`,
  ).toBeGreaterThanOrEqual(0);
  expect(k, `${label}: acknowledged events lost`).toBeGreaterThanOrEqual(run.acked);
  await store.close();
  return k;
}

/** Ops of a full run without a power loss. */
async function fullRunOps(): Promise<string[]> {
  const fs = new PowerLossFs();
  const run = await workload(fs, storeOptions(fs));
  expect(run.acked).toBe(EVS.length);
  return fs.ops;
}

describe('event store across a power loss', () => {
  it('loses nothing acknowledged when the power goes at any file operation (unsynced part dropped)', async () => {
    const ops = await fullRunOps();
    // the run exercises what the issue names: group commits, segment rolls, snapshots
    expect(ops.some((o) => o.startsWith('rename ') && o.endsWith('snapshot.bin'))).toBe(true);
    expect(ops.filter((o) => o.startsWith('openAppend ')).length).toBeGreaterThan(2);
    expect(ops.filter((o) => o.startsWith('remove ') && o.endsWith('.seg')).length).toBeGreaterThan(0);
    let sawTorn = 0;
    for (let at = 1; at <= ops.length; at++) {
      const fs = new PowerLossFs({ crashAtOp: at });
      const run = await workload(fs, storeOptions(fs));
      expect(fs.powerLost).toBe(true);
      const k = await recoverAndCheck(fs.survivor(), run, `power lost at op ${at} (${ops[at - 1]})`);
      if (k < run.committed) sawTorn++;
    }
    // some crash points lost unacknowledged commits: the test does cut where it matters
    expect(sawTorn).toBeGreaterThan(0);
  }, 240_000);

  it('recovery never refuses a torn last write, at any crash point (seeded prefix of the last write kept)', async () => {
    const ops = await fullRunOps();
    const rand = seededRandom(17);
    let cut = 0;
    for (let at = 1; at <= ops.length; at++) {
      const fs = new PowerLossFs({ crashAtOp: at });
      const run = await workload(fs, storeOptions(fs));
      const survivor = fs.survivor((len) => Math.floor(rand() * len));
      const store = await openStore(DIR, { ...storeOptions(survivor), segmentBytes: 1 << 20 });
      cut += store.stats().truncatedBytes;
      await store.close();
      await recoverAndCheck(survivor, run, `torn at op ${at} (${ops[at - 1]})`);
    }
    expect(cut, 'no crash point left a torn tail to cut').toBeGreaterThan(0);
  }, 240_000);

  it('survives a second power loss during recovery and the commits after it (seeded, bounded)', async () => {
    const ops = await fullRunOps();
    const rand = seededRandom(2026);
    for (let trial = 0; trial < 60; trial++) {
      const first = new PowerLossFs({ crashAtOp: 1 + Math.floor(rand() * ops.length) });
      const run1 = await workload(first, storeOptions(first));
      const frac = rand();
      const tear = (len: number) => Math.floor(frac * len);
      // count the second life's operations (recovery, then a clean close), then cut it at one
      const probe = first.survivor(tear);
      await recoverAndCheck(probe, run1, `trial ${trial} probe`);
      const second = first.survivor(tear, { crashAtOp: 1 + Math.floor(rand() * probe.ops.length) });
      try {
        const store = await openStore(DIR, storeOptions(second));
        await store.close().catch(() => {});
      } catch {
        // the power went while recovering
      }
      second.cutPower();
      await recoverAndCheck(second.survivor(), run1, `trial ${trial}: power lost again while recovering`);
    }
  }, 240_000);

  it('a snapshot is durable once writeSnapshotFile resolves', async () => {
    const fs = new PowerLossFs();
    await fs.mkdir(DIR);
    await writeSnapshotFile(DIR, { index: 1, state: bytes('old') }, fs);
    await writeSnapshotFile(DIR, { index: 2, state: bytes('new') }, fs);
    fs.cutPower();
    expect(await readSnapshotFile(DIR, fs.survivor())).toMatchObject({ index: 2 });
  });
});
