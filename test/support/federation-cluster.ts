/**
 * Shared by the federation tests between clusters: the two clusters, which member runs a link,
 * and where it reads from.
 */
import type { ClusterHandle } from '../../src/broker.js';
import type { MemberFederationLink } from '../../src/cluster-broker/supervisor/start-cluster.js';
import { startTestCluster, waitServing } from '../cluster-broker/cluster/cluster-support.js';
import { waitFor } from './net.js';

/**
 * Two 3-member clusters, `up` and `down`, with `down` federating `what` from `up`, both serving.
 * Each is pushed onto `started` as soon as it runs (the caller stops them).
 */
export async function startFederatedClusters(
  what: { queues?: string[]; topics?: string[] },
  started: ClusterHandle[],
): Promise<{ up: ClusterHandle; down: ClusterHandle }> {
  const up = await startTestCluster({ clusterId: 'up' });
  started.push(up);
  const down = await startTestCluster({
    clusterId: 'down',
    federation: { upstreams: [{ name: 'up', urls: up.urls, ...what, reconnectDelayMs: 200 }] },
  });
  started.push(down);
  await Promise.all([waitServing(up), waitServing(down)]);
  return { up, down };
}

/** The members whose link runs (state running) now. */
export async function runners(c: ClusterHandle): Promise<MemberFederationLink[]> {
  return (await c.federation()).filter((l) => l.state === 'running');
}

/** The member running the link, once exactly one does. */
export async function soleRunner(c: ClusterHandle): Promise<string> {
  let member = '';
  await waitFor(
    async () => {
      const r = await runners(c);
      member = r[0]?.member ?? '';
      return r.length === 1;
    },
    { timeoutMs: 30_000, what: 'one member running the link' },
  );
  return member;
}

/**
 * The upstream member (its id in `up`) the link of `down` reads from, once one member of `down`
 * runs it and is connected; `not`: wait until it is another member than this one.
 */
export async function upstreamMemberOf(
  down: ClusterHandle,
  up: ClusterHandle,
  not?: string,
): Promise<string> {
  let id = '';
  await waitFor(
    async () => {
      const r = await runners(down);
      const url = r.length === 1 ? r[0]!.upstreamMember : undefined;
      id = url === undefined ? '' : (up.ids[up.urls.indexOf(url)] ?? '');
      return id !== '' && id !== not;
    },
    { timeoutMs: 60_000, what: `the link connected to an upstream member${not ? ` other than ${not}` : ''}` },
  );
  return id;
}
