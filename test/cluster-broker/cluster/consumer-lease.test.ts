/**
 * The leader's lease on other members' consumers, and this process's own stops: a leader whose
 * event loop stood still runs its timers before it reads what the others sent meanwhile, so every
 * member looks silent for the length of the stop, and releasing a live member's consumers gives
 * its links messages they already had (and had accepted) a second time.
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { ConsumerLease } from '../../../src/cluster-broker/cluster/consumer-lease.js';
import { Membership } from '../../../src/cluster-broker/cluster/membership.js';
import { type ReplicaView, ServingWatch } from '../../../src/cluster-broker/cluster/serving-watch.js';

const LEASE = 5000;

describe('consumer lease', () => {
  it('releases a member silent for a lease, once per lease', () => {
    const lease = new ConsumerLease(LEASE);
    const heard = 1000; // n2's last status
    const silentFor = (now: number) => () => now - heard;
    expect(lease.due(['n2'], silentFor(5999), 0, 5999)).toEqual([]);
    expect(lease.due(['n2'], silentFor(6000), 0, 6000)).toEqual([{ member: 'n2', silentMs: 5000 }]);
    expect(lease.due(['n2'], silentFor(7000), 0, 7000)).toEqual([]);
    expect(lease.due(['n2'], silentFor(11_000), 0, 11_000).map((d) => d.member)).toEqual(['n2']);
  });

  it('counts no silence from before this process last resumed', () => {
    const lease = new ConsumerLease(LEASE);
    // n2 last heard at 1000; we stood still from 1100 to 7100 and resumed at 7100
    const silentFor = (now: number) => () => now - 1000;
    expect(lease.due(['n2'], silentFor(7100), 7100, 7100)).toEqual([]);
    expect(lease.due(['n2'], silentFor(12_099), 7100, 12_099)).toEqual([]);
    // still nothing from n2 a whole lease after we resumed: it is gone
    expect(lease.due(['n2'], silentFor(12_100), 7100, 12_100)).toEqual([{ member: 'n2', silentMs: 5000 }]);
  });
});

describe('serving watch: awake since', () => {
  function watch(): ServingWatch {
    const replica: ReplicaView = {
      isLeader: () => true,
      isQuorate: () => true,
      canServeReads: () => true,
      leaderId: 'n1',
      term: 1,
      commitIndex: 0,
      appliedIndex: 0,
      recovering: null,
    };
    const membership = new Membership({
      selfId: 'n1',
      memberIds: ['n1', 'n2', 'n3'],
      self: { host: '127.0.0.1', port: 5672, scheme: 'amqp' },
    });
    const backend = new ClusterBackend({ memberId: 'n1', origin: processKey('n1', 'a') });
    return new ServingWatch(
      { memberId: 'n1', incarnation: 'a', memberCount: 3 },
      replica,
      membership,
      backend,
    );
  }

  it('is the first tick, then the tick that finds the process was stopped', () => {
    const w = watch();
    expect(w.awakeSince).toBeUndefined();
    w.tick(1000);
    expect(w.awakeSince).toBe(1000);
    for (let t = 1100; t <= 3000; t += 100) w.tick(t);
    expect(w.awakeSince).toBe(1000); // ticking on time: still the same run
    w.tick(9000); // 6 s since the last tick: this process was stopped
    expect(w.awakeSince).toBe(9000);
  });
});
