/**
 * A committed entry is durable on a majority: three real members (`Replica`, TCP between them),
 * each on its own PowerLossFs whose syncs take a few milliseconds (a disk's latency: long enough
 * for a network answer to overtake it). The leader acknowledges proposals; right after one is
 * acknowledged the power goes on all three at once and the leader's disk is lost for good. The
 * two followers restart on what their disks kept, elect a leader, and it must hold every
 * acknowledged entry. A member that answers an append before its write is durable fails this.
 */
import { setTimeout as later } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DurableFile, DurableFs } from '../../../src/cluster-broker/files/durable-fs.js';
import { Replica } from '../../../src/cluster-broker/replication/replica.js';
import { PowerLossFs } from '../../support/power-loss-fs.js';
import { appliedAll, Journal, joined, leading } from './power-loss-member.js';
import { freePorts } from './process-cluster.js';

const IDS = ['n1', 'n2', 'n3'] as const;
/** How long a sync takes in this model. */
const SYNC_LATENCY_MS = 4;

/** A file system whose file syncs take SYNC_LATENCY_MS before they happen. */
function slowSyncs(fs: PowerLossFs): DurableFs {
  const slow = (f: DurableFile): DurableFile => ({
    write: (data) => f.write(data),
    datasync: () => later(SYNC_LATENCY_MS).then(() => f.datasync()),
    sync: () => later(SYNC_LATENCY_MS).then(() => f.sync()),
    close: () => f.close(),
  });
  return {
    mkdir: (d) => fs.mkdir(d),
    openAppend: (p) => fs.openAppend(p).then(slow),
    create: (p) => fs.create(p).then(slow),
    readFile: (p) => fs.readFile(p),
    openRead: (p) => fs.openRead(p),
    readdir: (d) => fs.readdir(d),
    rename: (a, b) => fs.rename(a, b),
    remove: (p) => fs.remove(p),
    truncate: (p, n) => fs.truncate(p, n),
    copyFile: (a, b) => fs.copyFile(a, b),
    syncFile: (p) => fs.syncFile(p),
    syncDir: (d) => fs.syncDir(d),
  };
}

interface Member {
  readonly replica: Replica;
  readonly disk: PowerLossFs;
  readonly journal: Journal;
  /** Its store no longer says it is recovering (see `joined`). */
  readonly joined: Promise<void>;
}

async function startMembers(
  ports: readonly number[],
  disks: ReadonlyMap<string, PowerLossFs>,
): Promise<Map<string, Member>> {
  const members = Object.fromEntries(IDS.map((id, i) => [id, { host: '127.0.0.1', port: ports[i]! }]));
  const out = new Map<string, Member>();
  await Promise.all(
    [...disks].map(async ([id, disk]) => {
      const journal = new Journal();
      const replica = await Replica.start({
        id,
        clusterId: 'power',
        members,
        dataDir: `/power-loss/${id}`,
        stateMachine: journal,
        fs: slowSyncs(disk),
        raft: { electionTimeoutMin: 80, electionTimeoutMax: 160, heartbeatInterval: 20 },
      });
      out.set(id, { replica, disk, journal, joined: joined(replica) });
    }),
  );
  return out;
}

function firstLeader(members: ReadonlyMap<string, Member>): Promise<Member> {
  return Promise.any([...members.values()].map((m) => leading(m.replica).then(() => m)));
}

describe('a cluster across a power loss of every member', () => {
  it('keeps every acknowledged entry on the followers: they restart without the leader and still hold it', async () => {
    for (const cutAfter of [1, 4, 9, 15]) {
      const ports = await freePorts(3);
      const disks = new Map(IDS.map((id) => [id, new PowerLossFs()]));
      const members = await startMembers(ports, disks);
      const acked: string[] = [];
      let oldLeader: string;
      try {
        // Every member must have joined before the cut: one still blank (its answers to the first
        // election came late, and no leader has caught it up yet) can restart only blank, and the
        // other survivor alone can then elect no one (docs/production.md#damaged-cluster-member:
        // the cluster waits, rightly; not what this test is about).
        await Promise.all([...members.values()].map((m) => m.joined));
        const leader = await firstLeader(members);
        oldLeader = leader.replica.id;
        for (let n = 1; !leader.disk.powerLost && n <= 40; n++) {
          const payload = `m${n}`;
          await leader.replica.propose(Buffer.from(payload)).then(
            () => {
              acked.push(payload);
              // the power goes on every member in the same turn as the acknowledgement
              if (acked.length === cutAfter) for (const d of disks.values()) d.cutPower();
            },
            () => {},
          );
        }
      } finally {
        await Promise.all([...members.values()].map((m) => m.replica.close()));
      }
      expect(acked, `cut after ${cutAfter}`).toHaveLength(cutAfter);

      // the old leader's disk is gone; the two others restart on what they kept
      const survivors = new Map(
        [...disks].filter(([id]) => id !== oldLeader).map(([id, d]) => [id, d.survivor()]),
      );
      const restarted = await startMembers(ports, survivors);
      try {
        const leader = await firstLeader(restarted);
        await appliedAll(leader.replica);
        const held = new Set(leader.journal.items);
        expect(
          acked.filter((p) => !held.has(p)),
          `cut after ${cutAfter}: acknowledged entries lost with the leader's disk`,
        ).toEqual([]);
      } finally {
        await Promise.all([...restarted.values()].map((m) => m.replica.close()));
      }
    }
  }, 120_000);
});
