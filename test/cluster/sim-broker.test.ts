/**
 * The replication simulation extended to the broker state machine (test/cluster/sim/): a fixed
 * seed range, 3- and 5-member clusters. On every seed: members that applied the same index hold
 * byte-identical BrokerState snapshots, the delivery contract holds on the committed results
 * (one owner per acquisition, dedup at apply time, monotonic leader time), and no acknowledged
 * message is lost. Replay a seed: `npx tsx test/cluster/sim/sim-cli.ts --seed N`.
 */
import { describe, expect, it } from 'vitest';
import { runBrokerSim } from './sim/broker-sim.js';

const SEEDS = 50;

describe('broker state machine under simulated faults', () => {
  it(`holds its invariants on seeds 0..${SEEDS - 1}`, () => {
    const failures: string[] = [];
    let committed = 0;
    let acquired = 0;
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = runBrokerSim({ seed, nodes: seed % 5 === 4 ? 5 : 3 });
      committed += r.committed;
      acquired += r.acquired;
      if (!r.ok) failures.push(`seed ${seed}: ${r.error?.split('\n')[0]}`);
    }
    expect(failures).toEqual([]);
    // the workload really ran: entries committed and messages acquired
    expect(committed).toBeGreaterThan(SEEDS * 100);
    expect(acquired).toBeGreaterThan(SEEDS * 30);
  }, 120_000);

  it('catches a member that applies with its own clock instead of the leader stamp', () => {
    const failed = [0, 1, 2, 3, 4, 5]
      .map((seed) => runBrokerSim({ seed, bug: 'local-clock' }))
      .filter((r) => !r.ok);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.error).toMatch(/state differs|different states/);
  }, 60_000);

  it('catches acknowledging an enqueue before it committed', () => {
    const failed = Array.from({ length: 12 }, (_, seed) =>
      runBrokerSim({ seed, bug: 'ack-on-append' }),
    ).filter((r) => !r.ok);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.error).toMatch(/lost|never enqueued/);
  }, 60_000);
});
