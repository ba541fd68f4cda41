/**
 * conn.transaction() against a 3-member cluster: a commit is one replicated entry, so every send
 * of it is there on another member even after the member that took the commit is killed; a kill
 * -9 of the member in use while a transaction is open rejects it with a TransactionError, and
 * nothing of it is visible anywhere (the failover journal does not re-send its sends).
 */
import { describe, expect, it } from 'vitest';
import { type Connection, connect, TransactionError } from '../../../../src/index.js';
import { waitServing } from '../../../cluster-broker/cluster/cluster-support.js';
import { useServingCluster } from '../../../cluster-broker/cluster/serving-cluster.js';
import { takeAvailable, watcher } from '../../../support/available.js';

const testCluster = useServingCluster();

async function connectTo(urls: string | string[], containerId: string): Promise<Connection> {
  const c = await connect({ urls, containerId, randomizeMembers: false, idleTimeoutMs: 2_000 });
  testCluster.track(c);
  return c;
}

function memberOf(conn: Connection): string {
  const m = testCluster.handle.members().find((x) => x.url === conn.url);
  if (!m) throw new Error(`no member at ${conn.url}`);
  return m.id;
}

function urlOf(id: string): string {
  return testCluster.handle.urls[testCluster.handle.ids.indexOf(id)]!;
}

describe('transactions on a 3-member cluster', () => {
  it('a commit is all-or-nothing: every send is there on another member, also after the committing member dies', async () => {
    const conn = await connectTo(testCluster.handle.urls, 'tx-cluster-commit');
    const inUse = memberOf(conn);
    const other = testCluster.handle.ids.find((id) => id !== inUse)!;
    const observer = await connectTo(urlOf(other), 'tx-cluster-commit-watcher');
    const seen = await watcher(observer, 'tx-cluster-commit');
    const sender = await conn.openSender('tx-cluster-commit');
    const bodies = ['a', 'b', 'c', 'd', 'e'];
    await conn.transaction(async (tx) => {
      for (const body of bodies) await sender.send({ body }, { tx });
      expect(await takeAvailable(seen)).toEqual([]);
    });
    await testCluster.handle.kill(inUse);
    // the commit was one log entry, committed on a majority before the client heard of it
    seen.addCredit(bodies.length);
    const got: unknown[] = [];
    for (let i = 0; i < bodies.length; i++) {
      const d = await seen.receive({ timeoutMs: 30_000 });
      got.push(d.message.body);
      await d.accept();
    }
    expect(got).toEqual(bodies);
    expect(await takeAvailable(seen)).toEqual([]);
    await testCluster.handle.restart(inUse);
    await waitServing(testCluster.handle);
  });

  it('kill -9 of the member in use while a transaction is open: TransactionError, nothing of it visible', async () => {
    const conn = await connectTo(testCluster.handle.urls, 'tx-cluster-kill');
    const inUse = memberOf(conn);
    const sender = await conn.openSender('tx-cluster-kill');
    let lateSend: Promise<unknown> | undefined;
    const outcome = conn.transaction(async (tx) => {
      await sender.send({ body: 'one' }, { tx });
      await sender.send({ body: 'two' }, { tx });
      // the function goes on after the failover: its commit must not go to the new member
      const failedOver = new Promise((resolve) => conn.once('failover', resolve));
      await testCluster.handle.kill(inUse);
      await failedOver;
      lateSend = sender.send({ body: 'three' }, { tx });
      await lateSend.catch(() => undefined);
      return 'committed?';
    });
    await expect(outcome).rejects.toBeInstanceOf(TransactionError);
    await expect(outcome).rejects.toMatchObject({ condition: 'amqp:transaction:rollback' });
    await expect(lateSend).rejects.toMatchObject({ inDoubt: false });
    // the queue holds only what is sent after it, as seen from a member that stayed up
    await sender.send({ body: 'marker' });
    const survivor = testCluster.handle.ids.find((id) => id !== inUse)!;
    const observer = await connectTo(urlOf(survivor), 'tx-cluster-kill-watcher');
    const seen = await watcher(observer, 'tx-cluster-kill');
    seen.addCredit(1);
    const first = await seen.receive({ timeoutMs: 30_000 });
    expect(first.message.body).toBe('marker');
    await first.accept();
    expect(await takeAvailable(seen)).toEqual([]);
    await testCluster.handle.restart(inUse);
    await waitServing(testCluster.handle);
  });
});
