/**
 * The broker simulation (test/cluster-broker/cluster/sim/): every member runs the real ClusterBackend over the
 * real RaftCore, ClusterStateMachine and codecs, on a fixed seed range of 3- and 5-member
 * clusters. On every seed: members that applied the same index hold byte-identical BrokerState
 * snapshots, the delivery contract holds on the committed results (one owner per acquisition,
 * dedup at apply time, monotonic leader time), every submit is answered with its own event's
 * result or "outcome unknown", and no acknowledged message is lost. Each deliberate bug below is
 * caught on the same seed range. Replay a seed: `npx tsx test/cluster-broker/cluster/sim/sim-cli.ts --seed N`.
 */
import { describe, expect, it } from 'vitest';
import { type BrokerSimOptions, type BrokerSimResult, runBrokerSim } from './sim/broker-sim.js';

const SEEDS = 50;

async function runSeeds(bug?: BrokerSimOptions['bug']): Promise<BrokerSimResult[]> {
  const results: BrokerSimResult[] = [];
  for (let seed = 0; seed < SEEDS; seed++) {
    results.push(await runBrokerSim({ seed, nodes: seed % 5 === 4 ? 5 : 3, ...(bug ? { bug } : {}) }));
  }
  return results;
}

/** The failed seeds' first error lines. */
function failures(results: BrokerSimResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `seed ${r.seed}: ${r.error?.split('\n')[0]}`);
}

describe('cluster members (ClusterBackend over Raft) under simulated faults', () => {
  it(`hold their invariants on seeds 0..${SEEDS - 1}`, async () => {
    const results = await runSeeds();
    expect(failures(results)).toEqual([]);
    // the workload really ran: entries committed, enqueues acknowledged, messages acquired
    const sum = (f: (r: BrokerSimResult) => number) => results.reduce((n, r) => n + f(r), 0);
    expect(sum((r) => r.committed)).toBeGreaterThan(SEEDS * 100);
    expect(sum((r) => r.acked)).toBeGreaterThan(SEEDS * 50);
    expect(sum((r) => r.acquired)).toBeGreaterThan(SEEDS * 30);
  }, 120_000);

  it('replays a seed exactly', async () => {
    const a = await runBrokerSim({ seed: 7 });
    const b = await runBrokerSim({ seed: 7 });
    expect(a.ok).toBe(true);
    expect(b).toEqual(a);
  }, 60_000);

  it('catches a member that applies with its own clock instead of the leader stamp', async () => {
    const failed = failures(await runSeeds('local-clock'));
    expect(failed.length).toBeGreaterThanOrEqual(SEEDS / 5);
    expect(failed[0]).toMatch(/state differs|different states/);
  }, 120_000);

  it('catches a backend that acknowledges an enqueue before it committed', async () => {
    const failed = failures(await runSeeds('ack-on-append'));
    expect(failed.length).toBeGreaterThanOrEqual(SEEDS / 10);
    for (const f of failed) expect(f).toMatch(/acknowledged .* (lost|never enqueued)/);
  }, 120_000);

  it("catches a backend that takes another member's outcome with the same number for its own", async () => {
    const failed = failures(await runSeeds('skip-origin-check'));
    expect(failed.length).toBeGreaterThanOrEqual(SEEDS / 5);
    for (const f of failed) expect(f).toMatch(/was answered with a .* result|acknowledged .* never enqueued/);
  }, 120_000);
});
