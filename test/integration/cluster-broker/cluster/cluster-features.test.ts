/**
 * Broker features on a 3-member cluster (docs/broker-features.md): a dynamic node is replicated
 * and survives a kill -9 of the member its owner used (the owner re-attaches elsewhere within the
 * grace period); a selector filters on any member.
 */
import { describe, expect, it } from 'vitest';
import { connect } from '../../../../src/index.js';
import {
  attachError as clusterAttachError,
  sendVia,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { useServingCluster } from '../../../cluster-broker/cluster/serving-cluster.js';
import { waitFor } from '../../../support/net.js';

const testCluster = useServingCluster();

/** The attach error of a plain receiver on `address` via member `id` (undefined: it attached). */
const attachError = (id: string, address: string) => clusterAttachError(testCluster.handle, id, address);

describe('a 3-member cluster', () => {
  it('a dynamic node survives kill -9 of the member its owner used; closing the receiver deletes it', async () => {
    const conn = await connect({
      urls: testCluster.handle.urls,
      randomizeMembers: false,
      containerId: 'dyn-owner',
    });
    testCluster.track(conn);
    const replies = await conn.openReceiver({ dynamic: true, credit: 10 });
    const address = replies.address;
    expect(address).toMatch(/^\$temp\//);
    const inUse = testCluster.handle.members().find((m) => m.url === conn.url)!.id;
    const others = testCluster.handle.ids.filter((id) => id !== inUse);
    // replicated: another member knows the node (once it has applied the declare)
    await waitFor(async () => (await attachError(others[0]!, address)) === undefined, {
      timeoutMs: 30_000,
      what: 'the dynamic node on another member',
    });

    const reattached = new Promise<void>((r) => replies.once('attached', () => r()));
    await testCluster.handle.kill(inUse);
    await reattached;
    expect(replies.address).toBe(address);
    await sendVia(testCluster.handle, others[1]!, address, ['after-kill']);
    const d = await replies.receive({ timeoutMs: 60_000 });
    expect(d.message.body).toBe('after-kill');
    await d.accept();

    await replies.close();
    await waitFor(async () => (await attachError(others[0]!, address)) === 'amqp:not-found', {
      timeoutMs: 30_000,
      what: 'the dynamic node deleted after close',
    });
    await testCluster.handle.restart(inUse);
    await waitServing(testCluster.handle);
  });
});
