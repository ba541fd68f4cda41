/**
 * How often a cluster member compacts its Raft log: a real one-member Replica (core,
 * FileStorage on an in-memory file system, timers) under a workload, with a state machine that
 * reports how large its state is. A small state is snapshotted every `snapshotEvery` entries; a
 * large one only once the log since the last snapshot pays for it, or reaches `maxLogBytes`.
 * Snapshotting a growing queue every N entries is quadratic, and showed in the profiles.
 */
import { describe, expect, it } from 'vitest';
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

/** Proposes `count` payloads of `size` bytes in bursts of 20, then waits until all applied. */
async function run(sm: StateMachine, count: number, size: number, extra: Partial<ReplicaOptions> = {}) {
  const replica = await Replica.start({
    id: 'n1',
    clusterId: 'pace',
    members: { n1: { host: '127.0.0.1', port: 0 } },
    dataDir: '/pace/replica',
    stateMachine: sm,
    fs: new PowerLossFs(),
    snapshotEvery: 10,
    tickMs: 5,
    raft: { electionTimeoutMin: 20, electionTimeoutMax: 40, heartbeatInterval: 10 },
    ...extra,
  });
  try {
    await leading(replica);
    for (let n = 0; n < count; ) {
      const burst: Promise<unknown>[] = [];
      for (let k = 0; k < 20 && n < count; k++, n++) burst.push(replica.propose(Buffer.alloc(size, n % 256)));
      await Promise.all(burst);
    }
    await appliedAll(replica);
  } finally {
    await replica.close();
  }
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
});
