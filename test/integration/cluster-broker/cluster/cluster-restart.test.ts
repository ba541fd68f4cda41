/**
 * Persistent cluster restart: every member kill -9ed at once and started again recovers every
 * acknowledged message (and not the consumed ones), with nobody choosing which store is newest;
 * plus a member restarted after compaction catches up from a snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import { defaultMemberCommand } from '../../../../src/cluster-broker/supervisor/index.js';
import { Collector, closeConn, open } from '../../../cluster-broker/cluster/amqp-helpers.js';
import {
  portOf,
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';

let handle: ClusterHandle;

beforeAll(async () => {
  // compact every 50 entries: restarts recover from snapshot + log suffix, catch-up needs snapshots
  handle = await startTestCluster({
    memberCommand: (m) => {
      const c = defaultMemberCommand(m);
      return { ...c, args: [...c.args, '--snapshot-every', '50'] };
    },
  });
  await waitServing(handle);
});

afterAll(async () => {
  await handle?.stop();
});

async function receive(id: string, address: string, n: number): Promise<string[]> {
  const o = await open(portOf(handle, id));
  try {
    const c = new Collector(o.conn, address, { exactly: n });
    await c.until(n, 30_000);
    return c.bodies;
  } finally {
    await closeConn(o.conn);
  }
}

describe('restarts with a compacted log', () => {
  it('a follower down while the log was compacted catches up from a snapshot and serves it all', async () => {
    const victim = 'n3';
    await handle.kill(victim);
    await waitLeader(handle, ['n1', 'n2']);
    await waitServing(handle, ['n1', 'n2']);
    const sent = range('snap', 200);
    await sendVia(handle, 'n1', 'q-snap', sent.slice(0, 100));
    await sendVia(handle, 'n2', 'q-snap', sent.slice(100));
    await handle.restart(victim);
    await waitServing(handle);
    const got = await receive(victim, 'q-snap', 200);
    expect(new Set(got)).toEqual(new Set(sent));
  });

  it('kill -9 of every member, then restart: every acknowledged, unconsumed message is back', async () => {
    const sent = [...range('r1', 100), ...range('r2', 100), ...range('r3', 100)];
    await sendVia(handle, 'n1', 'q-restart', sent.slice(0, 100));
    await sendVia(handle, 'n2', 'q-restart', sent.slice(100, 200));
    await sendVia(handle, 'n3', 'q-restart', sent.slice(200));
    // consume (and accept, confirmed by the commit before the next step) the first 50
    const consumed = await receive('n2', 'q-restart', 50);
    expect(consumed).toEqual(sent.slice(0, 50));
    await sendVia(handle, 'n3', 'q-other', range('o', 30));
    // n2 forwards in order: once this write is acknowledged, the accepts it sent before are committed
    await sendVia(handle, 'n2', 'q-marker', ['m']);

    await Promise.all(handle.ids.map((id) => handle.kill(id)));
    expect(handle.members().every((m) => m.state === 'dead')).toBe(true);
    await Promise.all(handle.ids.map((id) => handle.restart(id)));
    await waitServing(handle);

    const left = await receive('n3', 'q-restart', 250);
    expect(left.length).toBe(250);
    expect(new Set(left)).toEqual(new Set(sent.slice(50)));
    const other = await receive('n1', 'q-other', 30);
    expect(new Set(other)).toEqual(new Set(range('o', 30)));
  });
});
