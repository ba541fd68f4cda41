/**
 * Queue federation between two 3-member clusters (docs/federation.md#cluster): exactly one
 * member of the downstream cluster runs the link, chosen through its replicated log; kill -9 of
 * that member mid-flow and another takes the link over; kill -9 of the upstream member the link
 * reads from and the link fails over to another; then the owner is cut off from its cluster (it
 * stops being quorate) and another takes over again. The total-queue check over both clusters:
 * lost 0, duplicated 0, unexpected 0.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import type { QueuesDocument } from '../../../../src/cluster-broker/http/index.js';
import { waitServing } from '../../../cluster-broker/cluster/cluster-support.js';
import { consumeInto, patientClient, sendIds, TotalQueueCheck } from '../../../support/federation.js';
import {
  runners,
  soleRunner,
  startFederatedClusters,
  upstreamMemberOf,
} from '../../../support/federation-cluster.js';
import { waitFor } from '../../../support/net.js';

const N = 300;
const clusters: ClusterHandle[] = [];

afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

/**
 * Messages in `orders` on the cluster, as the first member that answers says (-1: none answers).
 * `except`: a member cut off from its cluster, whose state stands still at the cut.
 */
async function depth(c: ClusterHandle, except?: string): Promise<number> {
  for (const m of c.members()) {
    if (m.id === except || m.httpUrl === null) continue;
    try {
      const res = await fetch(`${m.httpUrl}/api/queues`, { signal: AbortSignal.timeout(2000) });
      if (!res.ok) continue;
      const doc = (await res.json()) as QueuesDocument;
      return doc.queues.find((q) => q.name === 'orders')?.messages ?? 0;
    } catch {
      // a killed member: ask the next
    }
  }
  return -1;
}

describe('queue federation between two clusters', () => {
  it('one member runs the link; kill -9 of it, of its upstream member, or its loss of quorum: another takes over, nothing lost or duplicated', {
    timeout: 240_000,
  }, async () => {
    const { up, down } = await startFederatedClusters({ queues: ['orders'] }, clusters);
    const owner = await soleRunner(down);
    const links = await down.federation();
    expect(
      links
        .filter((l) => l.state === 'standby')
        .map((l) => l.member)
        .sort(),
    ).toEqual(down.ids.filter((id) => id !== owner));

    const ids = Array.from({ length: N }, (_, i) => `c${i}`);
    await sendIds(up.urls, 'orders', ids);
    const check = new TotalQueueCheck(new Set(ids));
    const conn = await patientClient(down.urls);
    const consumer = await conn.openReceiver('orders', { credit: 50, dedup: false });
    const consuming = consumeInto(consumer, check);

    await waitFor(() => check.seen >= 100, { timeoutMs: 60_000, what: '100 consumed' });
    await down.kill(owner);
    await waitFor(async () => (await runners(down)).some((l) => l.member !== owner), {
      timeoutMs: 30_000,
      what: 'another member running the link',
    });
    // the upstream side: the member the link reads from dies; the link fails over to another
    const source = await upstreamMemberOf(down, up);
    await up.kill(source);
    await upstreamMemberOf(down, up, source);
    await waitFor(async () => (await depth(up)) === 0 && (await depth(down)) === 0, {
      timeoutMs: 90_000,
      what: 'both clusters empty',
    });
    await up.restart(source);
    await waitServing(up);

    // the owner cut off from its cluster stops (not quorate) and another member takes over
    await down.restart(owner);
    await waitServing(down);
    const cutOff = await soleRunner(down);
    const more = Array.from({ length: 100 }, (_, i) => `p${i}`);
    for (const id of more) check.expect(id);
    await sendIds(up.urls, 'orders', more);
    down.partition([[cutOff]]);
    await waitFor(
      async () => {
        const r = await runners(down);
        return r.length === 1 && r[0]!.member !== cutOff;
      },
      { timeoutMs: 30_000, what: 'only another member running the link' },
    );
    await waitFor(async () => (await depth(up)) === 0 && (await depth(down, cutOff)) === 0, {
      timeoutMs: 90_000,
      what: 'both clusters empty after the partition',
    });
    down.heal();
    await consumer.close();
    await consuming;
    await conn.close();
    expect(check.result()).toEqual({ lost: 0, duplicated: 0, unexpected: 0 });
  });
});
