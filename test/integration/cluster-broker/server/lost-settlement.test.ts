/**
 * Promise guarded: a message whose send resolved `accepted` is in the queue exactly once, even
 * when the broker committed it and its settlement never reached the client.
 *
 * A proxy swallows the broker's disposition for committed transfers and resets the connection
 * (test/support/settlement-drop-proxy.ts), so the client must re-send those messages as in doubt.
 * The check is on the queue's contents (read with receiver dedup off, and the broker's depth),
 * not at a deduplicating receiver: only the broker's duplicate detection by message-id can keep
 * the queue exactly-once. Single node, and a cluster where the re-send lands on another member
 * (the one that committed is killed with the settlement in flight).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, type ClusterHandle, startBroker } from '../../../../src/broker.js';
import { type Connection, connect, type SendResult } from '../../../../src/index.js';
import { startTestCluster, waitServing } from '../../../cluster-broker/cluster/cluster-support.js';
import { SettlementDropProxy } from '../../../support/settlement-drop-proxy.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

async function client(urls: string[]): Promise<Connection> {
  const conn = await connect({
    urls,
    containerId: `lost-settlement-${Math.random().toString(36).slice(2)}`,
    randomizeMembers: false,
    membershipPolicy: 'add',
    reconnect: { initialDelayMs: 20, maxDelayMs: 300, maxTimeMs: 60_000 },
  });
  cleanup.push(() => conn.close());
  return conn;
}

/** Sends `ids` with up to all of them in flight; arms the proxy once `armAfter` are accepted. */
async function sendThroughDrop(
  conn: Connection,
  proxy: SettlementDropProxy,
  queue: string,
  ids: string[],
  armAfter: number,
  onDropped: () => Promise<void> = async () => undefined,
): Promise<{ results: SendResult[]; dropped: { first: number; last: number } }> {
  const sender = await conn.openSender(queue);
  const first: SendResult[] = [];
  for (const id of ids.slice(0, armAfter)) first.push(await sender.send({ messageId: id, body: id }));
  const dropped = proxy.dropNextSettlement().then(async (d) => {
    await onDropped();
    return d;
  });
  const rest = await Promise.all(
    ids.slice(armAfter).map((id) => sender.send({ messageId: id, body: id }, { timeoutMs: 60_000 })),
  );
  return { results: [...first, ...rest], dropped: await dropped };
}

/** Every message-id in the queue, duplicates included (receiver dedup off). */
async function queueContents(url: string, queue: string, expected: number): Promise<string[]> {
  const conn = await client([url]);
  const receiver = await conn.openReceiver(queue, { credit: 200, dedup: false });
  const ids: string[] = [];
  for (;;) {
    try {
      // after the expected count, a short wait: anything more is a duplicate
      const d = await receiver.receive({ timeoutMs: ids.length < expected ? 20_000 : 1_000 });
      ids.push(String(d.message.messageId));
      await d.accept();
    } catch (e) {
      if ((e as { condition?: string }).condition === 'quorate:timeout') return ids;
      throw e;
    }
  }
}

describe('a committed message whose settlement is lost is re-sent and stored once', () => {
  it('single node (durable store)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorate-lost-settlement-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const broker: BrokerHandle = await startBroker({ host: '127.0.0.1', port: 0, dataDir: dir });
    cleanup.push(() => broker.stop());
    const proxy = new SettlementDropProxy({ host: '127.0.0.1', port: broker.port });
    cleanup.push(() => proxy.close());
    const proxyPort = await proxy.listen();

    const conn = await client([`amqp://127.0.0.1:${proxyPort}`, broker.url]);
    const ids = Array.from({ length: 120 }, (_, i) => `single-${i}`);
    const { results, dropped } = await sendThroughDrop(conn, proxy, 'lost-settle', ids, 10);

    expect(results.every((r) => r.state === 'accepted')).toBe(true);
    // the swallowed settlement covered committed messages, and the client re-sent them
    expect(dropped.last).toBeGreaterThanOrEqual(dropped.first);
    expect(results.filter((r) => r.resent).length).toBeGreaterThan(0);
    expect(broker.stats().queues.find((q) => q.name === 'lost-settle')?.depth).toBe(ids.length);
    const stored = await queueContents(broker.url, 'lost-settle', ids.length);
    expect(stored.sort()).toEqual([...ids].sort());
  });

  it('cluster: the re-send reaches another member, which knows the message already', async () => {
    const cluster: ClusterHandle = await startTestCluster();
    cleanup.push(() => cluster.stop());
    await waitServing(cluster);
    const [first, ...others] = cluster.members();
    const proxy = new SettlementDropProxy({ host: '127.0.0.1', port: first!.amqpPort });
    cleanup.push(() => proxy.close());
    const proxyPort = await proxy.listen();

    const conn = await client([`amqp://127.0.0.1:${proxyPort}`, ...others.map((m) => m.url)]);
    const ids = Array.from({ length: 120 }, (_, i) => `cluster-${i}`);
    // the member that committed dies with its settlement lost: the re-send must go elsewhere
    const { results } = await sendThroughDrop(conn, proxy, 'lost-settle-cluster', ids, 10, () =>
      cluster.kill(first!.id),
    );

    expect(results.every((r) => r.state === 'accepted')).toBe(true);
    expect(results.filter((r) => r.resent).length).toBeGreaterThan(0);
    const stored = await queueContents(others[0]!.url, 'lost-settle-cluster', ids.length);
    expect(stored.sort()).toEqual([...ids].sort());
  });
});
