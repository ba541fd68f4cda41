/**
 * Three replication members as separate processes over TCP with real files: kill -9 of the
 * leader, of a follower, of all three; every entry acknowledged before a kill is there after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessCluster } from '../../../cluster-broker/replication/process-cluster.js';

describe('replication: three processes, kill -9, restart', () => {
  let cluster: ProcessCluster;
  const acked: string[] = [];

  async function write(prefix: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const v = `${prefix}-${i}`;
      const r = await cluster.propose(v);
      if (r.ok) acked.push(v);
    }
  }

  /** Every acknowledged value is applied on every running member, once, in one common order. */
  async function checkAll(): Promise<void> {
    await cluster.waitApplied(acked.length);
    const dumps = await Promise.all(cluster.members.filter((m) => m.running).map((m) => m.dump()));
    for (const d of dumps) {
      expect(new Set(d).size).toBe(d.length);
      for (const v of acked) expect(d).toContain(v);
    }
    const shortest = Math.min(...dumps.map((d) => d.length));
    for (const d of dumps) expect(d.slice(0, shortest)).toEqual(dumps[0]!.slice(0, shortest));
  }

  beforeAll(async () => {
    cluster = await ProcessCluster.create({ size: 3, snapshotEvery: 40 });
    await cluster.startAll();
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('elects a leader and commits', async () => {
    await write('a', 30);
    expect(acked.length).toBe(30);
    await checkAll();
  });

  it('survives kill -9 of the leader', async () => {
    const old = await cluster.waitLeader();
    const writes = write('b', 20);
    await old.kill9();
    await writes;
    const leader = await cluster.waitLeader(20_000, old.id);
    expect(leader.id).not.toBe(old.id);
    await write('c', 20);
    await old.start();
    await checkAll();
  });

  it('survives kill -9 of a follower, which catches up (by snapshot) on restart', async () => {
    const leader = await cluster.waitLeader();
    const follower = cluster.members.find((m) => m.id !== leader.id)!;
    await follower.kill9();
    await write('d', 100); // more than snapshotEvery: the follower needs the snapshot
    await follower.start();
    await checkAll();
    expect((await follower.status()).restores).toBeGreaterThan(0);
  });

  it('survives SIGSTOP of the leader: the others elect a new one, the old one rejoins as follower', async () => {
    const old = await cluster.waitLeader();
    old.pause();
    try {
      const leader = await cluster.waitLeader(20_000, old.id);
      for (let i = 0; i < 10; i++) {
        const r = await leader.request({ op: 'propose', data: `s${i}` });
        expect(r.ok).toBe(true);
        acked.push(`s${i}`);
      }
    } finally {
      old.resume();
    }
    await checkAll();
    const st = await old.status();
    expect(st.role).not.toBe('leader');
  });

  it('survives kill -9 of all three and restarts from the stores alone', async () => {
    await write('e', 20);
    const before = acked.length;
    await Promise.all(cluster.members.map((m) => m.kill9()));
    await cluster.startAll();
    await cluster.waitLeader();
    await write('f', 10);
    expect(acked.length).toBe(before + 10);
    await checkAll();
  });
});
