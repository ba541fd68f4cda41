/**
 * Topics on a 3-member cluster (docs/topics.md): a durable subscriber (and a non-durable one, kept
 * for the grace period) whose member is killed -9 fails over and gets every message published
 * exactly once; a dynamic node and a non-durable
 * subscription whose owner's member was killed, and whose owner never comes back, are deleted
 * after the grace period by the surviving members (docs/topics.md#owner-gone); a non-durable
 * subscription whose link a link on another member steals stays with the successor.
 */
import type rhea from 'rhea';
import { describe, expect, it } from 'vitest';
import { connect } from '../../../../src/index.js';
import { open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  attachError as clusterAttachError,
  portOf,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { useServingCluster } from '../../../cluster-broker/cluster/serving-cluster.js';
import { waitFor } from '../../../support/net.js';

const GRACE_MS = 1_500;
const testCluster = useServingCluster({ memberArgs: ['--owner-grace-ms', String(GRACE_MS)] });

/** The attach error of a plain receiver on `address` via member `id` (undefined: it attached). */
const attachError = (id: string, address: string) => clusterAttachError(testCluster.handle, id, address);

/** Opens a rhea receiver and resolves with the source address the broker answered. */
function receiverOpened(c: rhea.Connection, options: rhea.ReceiverOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const link = c.open_receiver(options);
    link.once('receiver_open', () => resolve(String(link.source?.address)));
    link.once('receiver_close', () => reject(new Error(`refused: ${JSON.stringify(link.error)}`)));
  });
}

describe('topics on a 3-member cluster', () => {
  it('durable and non-durable subscribers fail over after kill -9 of their member and get every message exactly once', async () => {
    const { handle } = testCluster;
    const sub = testCluster.track(
      await connect({ urls: handle.urls, randomizeMembers: false, containerId: 'topic-durable' }),
    );
    const receiver = await sub.openReceiver('cluster-news', {
      topic: true,
      durable: true,
      subscription: 'all-news',
      credit: 5,
    });
    // non-durable: survives the failover too, the broker keeping it for the grace period
    const passing = await sub.openReceiver('cluster-news', {
      topic: true,
      subscription: 'passing',
      credit: 5,
    });
    const inUse = handle.members().find((m) => m.url === sub.url)!.id;
    const others = handle.ids.filter((id) => id !== inUse);
    const pub = testCluster.track(
      await connect({
        urls: others.map((id) => handle.urls[handle.ids.indexOf(id)]!),
        randomizeMembers: false,
      }),
    );
    const sender = await pub.openSender('cluster-news', { topic: true });
    const got: unknown[] = [];
    const gotPassing: unknown[] = [];
    const take = async (n: number, from = receiver, into = got): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const d = await from.receive({ timeoutMs: 60_000 });
        into.push(d.message.body);
        await d.accept();
      }
    };
    for (let i = 0; i < 10; i++) await sender.send({ messageId: `n-${i}`, body: `n-${i}` });
    await take(4);
    await take(3, passing, gotPassing);

    const reattached = Promise.all(
      [receiver, passing].map((r) => new Promise<void>((resolve) => r.once('attached', () => resolve()))),
    );
    await handle.kill(inUse);
    for (let i = 10; i < 20; i++) await sender.send({ messageId: `n-${i}`, body: `n-${i}` });
    await reattached;
    await take(16);
    await take(17, passing, gotPassing);
    const all = Array.from({ length: 20 }, (_, i) => `n-${i}`);
    expect(got).toEqual(all);
    expect(gotPassing).toEqual(all);

    await receiver.unsubscribe();
    await handle.restart(inUse);
    await waitServing(handle);
  });

  it('a non-durable subscription whose link is stolen by a link on another member stays with the successor past the grace period', async () => {
    const { handle } = testCluster;
    const [first, second] = handle.ids;
    const urlOf = (id: string) => handle.urls[handle.ids.indexOf(id)]!;
    const old = testCluster.track(
      await connect({ urls: urlOf(first!), reconnect: false, containerId: 'cross-steal' }),
    );
    const oldReceiver = await old.openReceiver('cluster-steal', { topic: true, name: 'ticker', credit: 5 });
    const stolen = new Promise<boolean>((resolve) => oldReceiver.on('detached', (d) => resolve(d.closed)));
    const subscription = '$sub/cross-steal/ticker';
    await waitFor(async () => (await attachError(second!, subscription)) === undefined, {
      timeoutMs: 30_000,
      what: `${subscription} on ${second}`,
    });
    // a delivery to the old link: its claim of the link key (submitted with its first acquire) is
    // committed before the successor's, so the successor is the newer of the two (without this
    // wait, a claim delayed on a loaded machine let the old link steal from the successor)
    const early = testCluster.track(await connect({ urls: urlOf(first!), reconnect: false }));
    await (await early.openSender('cluster-steal', { topic: true })).send({ body: 'before the steal' });
    const before = await oldReceiver.receive({ timeoutMs: 30_000 });
    expect(before.message.body).toBe('before the steal');
    await before.accept();
    // the same container-id and link name on another member: the first member's link is stolen,
    // and the old client answers that detach with closed=true (a steal is no decision of its own)
    const successor = testCluster.track(
      await connect({ urls: urlOf(second!), reconnect: false, containerId: 'cross-steal' }),
    );
    const receiver = await successor.openReceiver('cluster-steal', {
      topic: true,
      name: 'ticker',
      credit: 5,
    });
    expect(await stolen).toBe(true);
    // an owner-lost recorded for the old link must not end it: wait out several grace periods
    const waited = Date.now();
    await waitFor(
      async () =>
        Date.now() - waited > GRACE_MS * 3 && (await attachError(second!, subscription)) === undefined,
      {
        timeoutMs: 60_000,
        what: `${subscription} still there after the grace period`,
      },
    );
    const pub = testCluster.track(await connect({ urls: urlOf(second!), reconnect: false }));
    await (await pub.openSender('cluster-steal', { topic: true })).send({ body: 'after the steal' });
    const d = await receiver.receive({ timeoutMs: 30_000 });
    expect(d.message.body).toBe('after the steal');
    await d.accept();
  }, 300_000); // its own waits allow 30 + 30 + 60 + 30 s on a loaded machine

  it("a dynamic node and a non-durable subscription are deleted when their owner's member dies and the owner never re-attaches", async () => {
    const { handle } = testCluster;
    const victim = handle.ids[0]!;
    const survivor = handle.ids[1]!;
    const owner = await open(portOf(handle, victim), 'orphan-owner');
    const temp = await receiverOpened(owner.conn, {
      source: { dynamic: true } as rhea.Source,
      credit_window: 0,
    });
    expect(temp).toMatch(/^\$temp\//);
    await receiverOpened(owner.conn, {
      name: 'passing',
      source: { address: 'cluster-orphans', capabilities: ['topic'] },
      credit_window: 0,
    });
    const subscription = '$sub/orphan-owner/passing';
    // replicated: the survivor knows both (once it applied their declares)
    for (const address of [temp, subscription]) {
      await waitFor(async () => (await attachError(survivor, address)) === undefined, {
        timeoutMs: 30_000,
        what: `${address} on ${survivor}`,
      });
    }

    await handle.kill(victim); // the owner's connection dies with it and never comes back
    for (const address of [temp, subscription]) {
      await waitFor(async () => (await attachError(survivor, address)) === 'amqp:not-found', {
        timeoutMs: 60_000,
        what: `${address} deleted after the grace period`,
      });
    }
    await handle.restart(victim);
    await waitServing(handle);
  });
});
