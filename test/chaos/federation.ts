/**
 * The chaos runner's `--federation` mode: two reference clusters, `east` (upstream: the producers
 * send there) and `west` (downstream: it federates every queue of the run from east,
 * docs/federation.md). Each is an ordinary QuorateTarget with its own nemesis; the consumers on
 * west get their messages through the link, the ones on east compete with it.
 */
import type { ClusterHandle } from '../../src/broker.js';
import { QuorateTarget } from './quorate-target.js';

export interface FederatedPair {
  upstream: QuorateTarget;
  downstream: QuorateTarget;
  /** The downstream member running the link now, as last polled (the downstream's "client"). */
  linkOwner(): string | undefined;
  stop(): Promise<void>;
}

/** Every 500 ms: which member of `c` runs its links (kept when no member answers). */
function pollLinkOwner(c: ClusterHandle): { owner(): string | undefined; stop(): void } {
  let owner: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    c.federation()
      .then((links) => {
        owner = links.find((l) => l.state === 'running')?.member ?? owner;
      })
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, 500);
  return { owner: () => owner, stop: () => clearInterval(timer) };
}

export async function startFederatedPair(o: {
  nodes: number;
  seed: number;
  queues: readonly string[];
}): Promise<FederatedPair> {
  const upstream = await QuorateTarget.start({ nodes: o.nodes, seed: o.seed, clusterId: 'east' });
  let downstream: QuorateTarget;
  try {
    downstream = await QuorateTarget.start({
      nodes: o.nodes,
      seed: o.seed + 1,
      clusterId: 'west',
      // a short reconnect delay: the link's upstream members are killed too
      federation: {
        upstreams: [{ name: 'east', urls: upstream.urls, queues: [...o.queues], reconnectDelayMs: 500 }],
      },
    });
  } catch (err) {
    await upstream.stop();
    throw err;
  }
  const poll = pollLinkOwner(downstream.cluster);
  return {
    upstream,
    downstream,
    linkOwner: poll.owner,
    async stop() {
      poll.stop();
      await Promise.all([upstream.stop(), downstream.stop()]);
    },
  };
}
