/**
 * Test your application's failover with the bundled cluster (the README's example, as written):
 * `startCluster()` runs real member processes; the handle kills, pauses and partitions them.
 *
 *   npx vitest run examples/cluster-failover.test.ts
 */
import { connect } from 'quorate';
import { type ClusterHandle, startCluster } from 'quorate/broker';
import { afterAll, beforeAll, expect, it } from 'vitest';

let cluster: ClusterHandle;
beforeAll(async () => {
  cluster = await startCluster({ nodes: 3 }); // resolves once every member serves; free ports, temp dirs
});
afterAll(() => cluster.stop()); // every member process gone, temp dir removed

it('an acknowledged send survives kill -9 of the member in use', async () => {
  const conn = await connect({ urls: cluster.urls, containerId: 'readme-example' });
  const sender = await conn.openSender('orders');
  expect((await sender.send({ messageId: 'order-1', body: { total: 42 } })).state).toBe('accepted');

  const inUse = cluster.members().find((m) => new URL(m.url).port === new URL(conn.url ?? '').port);
  await cluster.kill(inUse!.id); // a real SIGKILL; it stays down until restart()
  // the client fails over to a quorate member and carries on
  expect((await sender.send({ messageId: 'order-2', body: { total: 7 } })).state).toBe('accepted');

  const receiver = await conn.openReceiver('orders');
  const got: unknown[] = [];
  for await (const delivery of receiver) {
    got.push(delivery.message.messageId);
    await delivery.accept();
    if (got.length === 2) break;
  }
  expect(got).toEqual(['order-1', 'order-2']);
  await conn.close();
});
