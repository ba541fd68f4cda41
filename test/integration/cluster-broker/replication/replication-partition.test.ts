/**
 * Three replication processes talking through a loopback proxy mesh: an isolated leader stops
 * being quorate and steps down (check-quorum), the majority elects a new leader and commits, and
 * the old leader rejoins without disrupting it (pre-vote: it did not inflate its term).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProxyMesh } from '../../../../src/cluster-broker/netproxy/index.js';
import { reserveFreePorts } from '../../../../src/cluster-broker/supervisor/ports.js';
import { type MemberProcess, ProcessCluster } from '../../../cluster-broker/replication/process-cluster.js';
import { waitFor } from '../../../support/net.js';

describe('replication: partitions through a proxy', () => {
  let cluster: ProcessCluster;
  let mesh: ProxyMesh;
  const acked: string[] = [];

  beforeAll(async () => {
    // the members' ports stay held while the proxies bind port 0, so no proxy is given one of
    // them (a member that cannot listen leaves a 2-member cluster that cannot lose its leader)
    const { ports, release } = await reserveFreePorts(3);
    try {
      mesh = await ProxyMesh.start({ members: ports.map((p, i) => ({ id: `n${i + 1}`, clusterPort: p })) });
    } finally {
      await release();
    }
    cluster = await ProcessCluster.create({ size: 3, ports, peersArg: (id) => mesh.peersArg(id) });
    await cluster.startAll();
  });

  // a test that failed with the mesh cut must not fail the next one for it
  afterEach(() => mesh?.heal());

  afterAll(async () => {
    await cluster?.destroy();
    await mesh?.close();
  });

  it('an isolated leader steps down, the majority goes on, the old leader rejoins quietly', async () => {
    for (let i = 0; i < 10; i++) if ((await cluster.propose(`a${i}`)).ok) acked.push(`a${i}`);
    const old: MemberProcess = await cluster.waitLeader();
    // every member holds the entries and votes before the cut: a member that started blank (a new
    // store) and missed the new cluster's all-blank round votes only once a leader has told it it
    // caught up, and that news comes a round trip after its entries; cut off before it, a blank
    // survivor and a full one can never elect each other (seen in CI: both survivors
    // pre-campaigning until the deadline, one of them still 'blank' with every value applied)
    await cluster.waitApplied(acked.length);
    mesh.partition([[old.id]]);

    // check-quorum: the cut-off leader notices it has no majority and stops serving
    await waitFor(
      async () => {
        const s = await old.status();
        return s.role !== 'leader' && !s.quorate;
      },
      { timeoutMs: 20_000, what: 'the isolated leader to step down', intervalMs: 20 },
    );
    const refused = await old.request({ op: 'propose', data: 'lost?' });
    expect(refused.ok).toBe(false);

    await cluster.waitLeader(20_000, old.id);
    for (let i = 0; i < 10; i++) {
      const r = await cluster.propose(`b${i}`, 20_000, old.id);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      acked.push(`b${i}`);
    }
    const leader = await cluster.waitLeader(20_000, old.id);
    const termBefore = (await leader.status()).term;
    // pre-vote: isolated, the old leader never raised its term past the majority's
    expect((await old.status()).term).toBeLessThanOrEqual(termBefore);

    mesh.heal();
    await waitFor(async () => (await old.status()).count >= acked.length, {
      timeoutMs: 20_000,
      what: 'the old leader to catch up',
      intervalMs: 20,
    });
    const after = await leader.status();
    expect(after.role).toBe('leader');
    expect(after.term).toBe(termBefore);
    const values = await old.dump();
    for (const v of acked) expect(values).toContain(v);
    expect(values).not.toContain('lost?');
  });

  it('a minority side cannot commit; the majority side can', async () => {
    const leader = await cluster.waitLeader();
    // the follower left with the leader must count toward its majority
    await cluster.waitApplied(0);
    const others = cluster.members.filter((m) => m.id !== leader.id);
    // leader + one follower keep the majority, the other follower is alone
    mesh.partition([[leader.id, others[0]!.id], [others[1]!.id]]);
    const r = await leader.request({ op: 'propose', data: 'majority' });
    expect(r.ok).toBe(true);
    await waitFor(async () => !(await others[1]!.status()).quorate, {
      timeoutMs: 20_000,
      what: 'the lone follower to lose its leader',
      intervalMs: 20,
    });
    mesh.heal();
    await waitFor(async () => (await others[1]!.dump()).includes('majority'), {
      timeoutMs: 20_000,
      what: 'the lone follower to catch up',
      intervalMs: 20,
    });
  });
});
