/**
 * How often a cluster member compacts its Raft log: a real one-member Replica (core,
 * FileStorage on an in-memory file system, timers) under a workload, with a state machine that
 * reports how large its state is. A small state is snapshotted every `snapshotEvery` entries; a
 * large one only once the log since the last snapshot pays for it, or reaches `maxLogBytes`.
 * Snapshotting a growing queue every N entries is quadratic, and showed in the profiles. A
 * draining queue is not snapshotted half way (its messages are about to be deleted).
 */
import { describe, expect, it } from 'vitest';
import {
  CompactionPace,
  draining,
  SMALL_STATE_BYTES,
} from '../../../src/cluster-broker/files/compaction-pace.js';
import type { Entry, Snapshot } from '../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../src/cluster-broker/replication/raft/types.js';
import {
  Replica,
  type ReplicaOptions,
  type StateMachine,
} from '../../../src/cluster-broker/replication/replica.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';
import { appliedAll, leading } from './power-loss-member.js';

/** A state machine whose size is `live(bytes applied)`; counts its snapshots. */
class SizedState implements StateMachine {
  applied = 0;
  snapshots = 0;
  constructor(private readonly live: (applied: number) => number) {}
  apply(entry: Entry): void {
    this.applied += entry.data?.length ?? 0;
  }
  restore(snapshot: Snapshot): void {
    this.applied = Buffer.from(snapshotBytes(snapshot.data)).readUInt32BE(0);
  }
  snapshot(): Uint8Array {
    this.snapshots++;
    const b = Buffer.alloc(4);
    b.writeUInt32BE(this.applied);
    return b;
  }
  liveBytes(): number {
    return this.live(this.applied);
  }
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** One part of a workload: `count` payloads made by `payload(n)`. */
interface Phase {
  readonly name: string;
  readonly count: number;
  readonly payload: (n: number) => Buffer;
}

/** Proposes each phase's payloads in bursts of 20, each phase once the last is applied. */
async function runPhases(
  sm: StateMachine,
  phases: readonly Phase[],
  extra: Partial<ReplicaOptions> = {},
  onPhase: (name: string) => void = () => {},
) {
  const replica = await Replica.start({
    id: 'n1',
    clusterId: 'pace',
    members: { n1: { host: '127.0.0.1', port: 0 } },
    dataDir: '/pace/replica',
    stateMachine: sm,
    fs: new PowerLossFs(),
    snapshotEvery: 10,
    raft: { electionTimeoutMin: 20, electionTimeoutMax: 40, heartbeatInterval: 10 },
    ...extra,
  });
  try {
    await leading(replica);
    for (const phase of phases) {
      onPhase(phase.name);
      for (let n = 0; n < phase.count; ) {
        const burst: Promise<unknown>[] = [];
        for (let k = 0; k < 20 && n < phase.count; k++, n++) burst.push(replica.propose(phase.payload(n)));
        await Promise.all(burst);
      }
      await appliedAll(replica);
    }
  } finally {
    await replica.close();
  }
}

/** Proposes `count` payloads of `size` bytes in bursts of 20, then waits until all applied. */
function run(sm: StateMachine, count: number, size: number, extra: Partial<ReplicaOptions> = {}) {
  return runPhases(sm, [{ name: 'all', count, payload: (n) => Buffer.alloc(size, n % 256) }], extra);
}

const ENQUEUE = 1;
const SETTLE = 2;
const ACQUIRE = 3;
/** A queued message, and the log entry that settles one (a few dozen bytes, as the broker's). */
const MESSAGE_BYTES = 10 * KIB;
const SETTLE_BYTES = 40;
const enqueue = (): Buffer => Buffer.alloc(MESSAGE_BYTES, ENQUEUE);
const settle = (): Buffer => Buffer.alloc(SETTLE_BYTES, SETTLE);
/**
 * A consumer's drain as the broker logs it: a burst of acquires (no live bytes change), then a
 * burst settling them, so some checks see the log grow and nothing fall.
 */
const drainEntry = (n: number): Buffer =>
  Math.floor(n / 20) % 2 === 0 ? Buffer.alloc(SETTLE_BYTES, ACQUIRE) : settle();

/**
 * A queue: an entry tagged ENQUEUE adds its bytes to the live state, one tagged SETTLE removes a
 * message, one tagged ACQUIRE changes nothing. Records each snapshot's phase and live bytes.
 */
class QueueState implements StateMachine {
  live = 0;
  phase = '';
  readonly taken: { phase: string; live: number }[] = [];
  apply(entry: Entry): void {
    const d = entry.data;
    if (!d || d.length === 0) return;
    if (d[0] === SETTLE) this.live = Math.max(0, this.live - MESSAGE_BYTES);
    else if (d[0] === ENQUEUE) this.live += d.length;
  }
  restore(snapshot: Snapshot): void {
    this.live = Buffer.from(snapshotBytes(snapshot.data)).readUInt32BE(0);
  }
  snapshot(): Uint8Array {
    this.taken.push({ phase: this.phase, live: this.live });
    const b = Buffer.alloc(4);
    b.writeUInt32BE(this.live);
    return b;
  }
  liveBytes(): number {
    return this.live;
  }
  /** Snapshots taken in `phase` of a state past SMALL_STATE_BYTES (those the count alone does not take). */
  large(phase: string): number {
    return this.taken.filter((t) => t.phase === phase && t.live > SMALL_STATE_BYTES).length;
  }
  in(phase: string): number {
    return this.taken.filter((t) => t.phase === phase).length;
  }
}

function runQueue(sm: QueueState, phases: readonly Phase[], extra: Partial<ReplicaOptions> = {}) {
  return runPhases(sm, phases, extra, (name) => {
    sm.phase = name;
  });
}

describe('Raft log compaction pace', () => {
  it('snapshots a small state every snapshotEvery entries', async () => {
    const sm = new SizedState(() => 0);
    await run(sm, 100, 100);
    // compaction runs once per batch of applied entries (bursts of 20 here), not per entry
    expect(sm.snapshots).toBeGreaterThanOrEqual(4);
  });

  it('does not snapshot a large growing state every snapshotEvery entries', async () => {
    // 200 KiB of log against a 2 MiB state: far from paying for a snapshot
    const sm = new SizedState((applied) => 2 * MIB + applied);
    await run(sm, 200, KIB);
    expect(sm.snapshots).toBe(0);
  });

  it('snapshots a large state once the log since the last snapshot is twice its size', async () => {
    // a 1.5 MiB state, 4 MiB of log: due after 3 MiB (entry ~300), then not again before 400
    const sm = new SizedState(() => 1.5 * MIB);
    await run(sm, 400, 10 * KIB);
    expect(sm.snapshots).toBe(1);
  });

  it('snapshots whatever the state once the log reaches maxLogBytes', async () => {
    const sm = new SizedState((applied) => 64 * MIB + applied);
    await run(sm, 200, KIB, { maxLogBytes: 50 * KIB });
    expect(sm.snapshots).toBeGreaterThanOrEqual(3);
    expect(sm.snapshots).toBeLessThanOrEqual(4);
  });

  it('snapshots at maxLogBytes before snapshotEvery entries: the log file stays bounded', async () => {
    // 200 entries of 10 KiB never reach snapshotEvery 10,000; 2 MiB of log passes 500 KiB 4 times
    const sm = new SizedState(() => 0);
    await run(sm, 200, 10 * KIB, { snapshotEvery: 10_000, maxLogBytes: 500 * KIB });
    expect(sm.snapshots).toBeGreaterThanOrEqual(3);
    expect(sm.snapshots).toBeLessThanOrEqual(4);
  });

  it('does not snapshot a queue half way through its drain, but once it is small', async () => {
    // 8 MiB queued, then drained: the log since the last snapshot (~7 MiB of enqueues) pays for
    // a snapshot once ~3.5 MiB are left; those messages are about to be deleted
    const sm = new QueueState();
    await runQueue(sm, [
      { name: 'fill', count: 800, payload: enqueue },
      { name: 'drain', count: 1600, payload: drainEntry },
    ]);
    expect(sm.large('drain')).toBe(0);
    expect(sm.in('drain')).toBeGreaterThan(0); // the small-state rule, near the end of the drain
  });

  it('still snapshots a queue that fills, then holds a constant depth', async () => {
    // 2 MiB queued, then as many enqueued as settled: the log since the last snapshot (~1 MiB
    // after the fill) pays for a 2 MiB snapshot at 4 MiB, so at ~300 and ~700 pairs
    const sm = new QueueState();
    await runQueue(sm, [
      { name: 'fill', count: 200, payload: enqueue },
      { name: 'steady', count: 2000, payload: (n) => (n % 2 === 0 ? enqueue() : settle()) },
    ]);
    expect(sm.large('fill')).toBe(0);
    expect(sm.large('steady')).toBeGreaterThanOrEqual(2);
    expect(sm.large('steady')).toBeLessThanOrEqual(3);
  });

  it('snapshots a queue that only fills as before: while small, then at maxLogBytes', async () => {
    // 8 MiB queued: small until 1 MiB; past it, the log never pays for the growing state, and
    // maxLogBytes (2 MiB) takes a snapshot every ~2 MiB: 3 times in the 7 MiB after
    const sm = new QueueState();
    await runQueue(sm, [{ name: 'fill', count: 800, payload: enqueue }], { maxLogBytes: 2 * MIB });
    expect(sm.in('fill') - sm.large('fill')).toBeGreaterThan(0);
    expect(sm.large('fill')).toBeGreaterThanOrEqual(3);
    expect(sm.large('fill')).toBeLessThanOrEqual(4);
  });

  it('snapshots at maxLogBytes during a drain too', async () => {
    // the drain past 1 MiB left is 1400 entries, 56 KiB of log: over 8 KiB six times
    const sm = new QueueState();
    await runQueue(
      sm,
      [
        { name: 'fill', count: 800, payload: enqueue },
        { name: 'drain', count: 1600, payload: drainEntry },
      ],
      { maxLogBytes: 8 * KIB },
    );
    expect(sm.large('drain')).toBeGreaterThanOrEqual(4);
  });
});

describe('CompactionPace', () => {
  it('defers a snapshot that pays off while the live bytes fell faster than the log grew', () => {
    const pace = new CompactionPace();
    expect(pace.paysOff(6 * MIB, 4 * MIB)).toBe(false); // the peak; does not pay off
    // a drain: 4 KiB more log, 1 MiB less live; pays off now, but draining
    expect(pace.paysOff(6 * MIB + 4 * KIB, 3 * MIB)).toBe(false);
    // an acquire: the log grew, nothing fell since the last check, but since the peak
    expect(pace.paysOff(6 * MIB + 8 * KIB, 3 * MIB)).toBe(false);
    // the log grown since the peak reached what the live bytes fell: snapshot
    expect(pace.paysOff(7 * MIB + 4 * KIB, 3 * MIB)).toBe(true);
  });

  it('does not defer when the live bytes rise, hold, or fall slower than the log grows', () => {
    expect(new CompactionPace().paysOff(6 * MIB, 3 * MIB)).toBe(true); // no earlier check
    for (const [log, live] of [
      [7 * MIB, 3 * MIB + KIB],
      [7 * MIB, 3 * MIB],
      [7 * MIB, 3 * MIB - KIB],
    ] as const) {
      const pace = new CompactionPace();
      expect(pace.paysOff(5 * MIB, 3 * MIB)).toBe(false);
      expect(pace.paysOff(log, live)).toBe(true);
    }
  });

  it('answers a check that saw no new log as the last one, without a new observation', () => {
    const pace = new CompactionPace();
    expect(pace.paysOff(5 * MIB, 3 * MIB)).toBe(false);
    expect(pace.unchanged(5 * MIB)).toBe(true);
    expect(pace.paysOff(5 * MIB, 0)).toBe(false);
    expect(pace.unchanged(5 * MIB + 1)).toBe(false);
  });

  it('forgets the peak once it said to snapshot, and across a log that shrank', () => {
    const pace = new CompactionPace();
    expect(pace.paysOff(6 * MIB, 3 * MIB)).toBe(true);
    // a new log: a fall from the 3 MiB seen before the snapshot is no drain of this one
    expect(pace.paysOff(2 * MIB, MIB)).toBe(true);
    const other = new CompactionPace();
    expect(other.paysOff(9 * MIB, 5 * MIB)).toBe(false);
    other.compacted();
    expect(other.paysOff(10 * MIB, 3 * MIB)).toBe(true);
    expect(draining({ logBytes: 6 * MIB, liveBytes: 4 * MIB }, { logBytes: MIB, liveBytes: 0 })).toBe(false);
    expect(draining(undefined, { logBytes: MIB, liveBytes: 0 })).toBe(false);
  });
});
