/**
 * Topic federation between two 3-member clusters (docs/federation.md#topics): the downstream
 * cluster's link holds a durable subscription on the upstream topic and republishes to its own,
 * read by two durable subscriptions there. While messages are published upstream without pause,
 * kill -9 of the downstream member running the link (another member takes it over and resumes
 * the same upstream subscription), then of the upstream member the link reads from (the link
 * fails over to another). Each local subscription's check: lost 0, duplicated 0, unexpected 0.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import type { Connection } from '../../../../src/index.js';
import {
  consumeInto,
  patientClient,
  sendUntilAccepted,
  TotalQueueCheck,
} from '../../../support/federation.js';
import {
  runners,
  soleRunner,
  startFederatedClusters,
  upstreamMemberOf,
} from '../../../support/federation-cluster.js';
import { waitFor } from '../../../support/net.js';

/** Messages published per batch; batches follow each other until the kills are done. */
const BATCH = 25;
const clusters: ClusterHandle[] = [];
const conns: Connection[] = [];

afterAll(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  await Promise.all(clusters.map((c) => c.stop()));
});

describe('topic federation between two clusters', () => {
  it('kill -9 of the link member downstream and of its upstream member: every local subscription gets every message once', {
    timeout: 240_000,
  }, async () => {
    const { up, down } = await startFederatedClusters({ topics: ['prices'] }, clusters);
    // running: the link's upstream subscription exists, so everything published from now on is kept for it
    const owner = await soleRunner(down);
    expect((await down.federation()).find((l) => l.member === owner)).toMatchObject({
      kind: 'topic',
      queue: 'prices',
    });

    const consumerConn = await patientClient(down.urls);
    conns.push(consumerConn);
    const checks = [new TotalQueueCheck([]), new TotalQueueCheck([])];
    const consuming = await Promise.all(
      checks.map(async (check, i) => {
        const r = await consumerConn.openReceiver('prices', {
          topic: true,
          durable: true,
          subscription: `s${i}`,
          credit: 50,
          dedup: false,
        });
        return { r, done: consumeInto(r, check) };
      }),
    );

    const publisherConn = await patientClient(up.urls);
    conns.push(publisherConn);
    const sender = await publisherConn.openSender('prices', { topic: true });
    let published = 0;
    let publishing = true;
    const publisher = (async () => {
      for (let batch = 0; publishing; batch++) {
        const ids = Array.from({ length: BATCH }, (_, i) => `b${batch}-${i}`);
        for (const id of ids) for (const check of checks) check.expect(id);
        await Promise.all(ids.map((id) => sendUntilAccepted(sender, id)));
        published += ids.length;
      }
    })();
    const seen = (): number => Math.min(...checks.map((c) => c.seen));

    await waitFor(() => seen() >= 50, { timeoutMs: 60_000, what: '50 on each subscription' });
    await down.kill(owner);
    await waitFor(async () => (await runners(down)).some((l) => l.member !== owner), {
      timeoutMs: 30_000,
      what: 'another member running the link',
    });
    const afterTakeover = seen();
    await waitFor(() => seen() >= afterTakeover + 50, {
      timeoutMs: 60_000,
      what: '50 more after the takeover',
    });
    const source = await upstreamMemberOf(down, up);
    await up.kill(source);
    await upstreamMemberOf(down, up, source);
    const afterFailover = seen();
    await waitFor(() => seen() >= afterFailover + 50, {
      timeoutMs: 60_000,
      what: '50 more after the failover',
    });

    publishing = false;
    await publisher;
    await waitFor(() => checks.every((c) => c.seen === published), {
      timeoutMs: 90_000,
      what: `all ${published} on each subscription`,
    });
    for (const { r } of consuming) await r.close();
    await Promise.all(consuming.map((c) => c.done));
    expect(checks.map((c) => c.result())).toEqual([
      { lost: 0, duplicated: 0, unexpected: 0 },
      { lost: 0, duplicated: 0, unexpected: 0 },
    ]);
  });
});
