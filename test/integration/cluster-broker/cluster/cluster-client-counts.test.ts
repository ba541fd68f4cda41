/**
 * Cluster-wide client counts in `/api/overview` (docs/monitoring.md#cluster-counts), on a
 * 3-member cluster of real processes: a connection with a consumer on one member is counted, per
 * member and in the totals, on another member's overview; once that member is killed the others
 * show its counts as unknown (null, named in `uncountedMembers`), never as 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import type { Overview } from '../../../../src/cluster-broker/http/types.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  portOf,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { waitFor } from '../../../support/net.js';

let handle: ClusterHandle;

async function overview(id: string): Promise<Overview> {
  const res = await fetch(`${handle.members().find((m) => m.id === id)!.httpUrl!}/api/overview`);
  expect(res.status).toBe(200);
  return (await res.json()) as Overview;
}

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
}, 180_000);

afterAll(async () => {
  await handle?.stop();
});

describe('cluster-wide client counts', () => {
  it('a consumer attached on one member is counted on another member, and unknown once it is gone', async () => {
    const leader = await waitLeader(handle);
    const [holder, viewer] = handle.ids.filter((id) => id !== leader) as [string, string];
    const opened = await open(portOf(handle, holder));
    try {
      const consumer = new Collector(opened.conn, 'counted-orders');
      await new Promise<void>((resolve) => consumer.link.once('receiver_open', () => resolve()));

      let seen: Overview | undefined;
      await waitFor(
        async () => {
          seen = await overview(viewer);
          return seen.members.find((m) => m.id === holder)?.consumers === 1;
        },
        { timeoutMs: 15_000, what: `${viewer} to count the consumer on ${holder}` },
      );
      const o = seen!;
      const held = o.members.find((m) => m.id === holder)!;
      const own = o.members.find((m) => m.id === viewer)!;
      expect(held).toMatchObject({ connections: 1, consumers: 1 });
      // the viewer's own entry is its own count, the same as the member-local keys
      expect(own).toMatchObject({ connections: o.connections, consumers: o.consumers });
      expect(o.consumers).toBe(0);
      expect(o.uncountedMembers).toEqual([]);
      expect(o.clusterConsumers).toBe(1);
      expect(o.clusterConnections).toBe(1);
      for (const m of o.members) expect(m.connections).not.toBeNull();
      // the leader sees it as well
      await waitFor(async () => (await overview(leader)).clusterConsumers === 1, {
        timeoutMs: 15_000,
        what: `${leader} to count the consumer on ${holder}`,
      });

      await handle.kill(holder);
      await waitFor(
        async () => {
          seen = await overview(viewer);
          return !seen.members.find((m) => m.id === holder)!.reachable;
        },
        { timeoutMs: 15_000, what: `${viewer} to see ${holder} unreachable` },
      );
      expect(seen!.members.find((m) => m.id === holder)).toMatchObject({
        connections: null,
        consumers: null,
      });
      expect(seen!.uncountedMembers).toEqual([holder]);
      expect(seen!.clusterConsumers).toBe(0);
    } finally {
      void closeConn(opened.conn);
    }
  });
});
