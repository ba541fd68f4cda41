/**
 * The chaos runner's `--federation` mode: two reference clusters, `east` (upstream: the producers
 * send there) and `west` (downstream: it federates every queue of the run from east,
 * docs/federation.md). Each is an ordinary QuorateTarget with its own nemesis; the consumers on
 * west get their messages through the link, the ones on east compete with it. With `topics`
 * (`--topic`) west also federates those topics: its link holds a durable subscription on each of
 * east's.
 */
import type { ClusterHandle } from '../../src/broker.js';
import { waitFor } from '../support/net.js';
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

/**
 * Until a member of `c` runs the topic link of every topic in `topics`: its durable subscription
 * on the upstream then exists (the link runs once its attach is answered), so everything
 * published from then on reaches the downstream.
 */
function topicLinksRunning(c: ClusterHandle, topics: readonly string[]): Promise<void> {
  return waitFor(
    async () => {
      const links = await c.federation();
      return topics.every((t) =>
        links.some((l) => l.kind === 'topic' && l.queue === t && l.state === 'running'),
      );
    },
    { timeoutMs: 60_000, what: `the topic links of ${topics.join(', ')} running`, intervalMs: 200 },
  );
}

export async function startFederatedPair(o: {
  nodes: number;
  seed: number;
  queues: readonly string[];
  /** topics west federates too (their links run before this resolves). Default none. */
  topics?: readonly string[];
}): Promise<FederatedPair> {
  const topics = o.topics ?? [];
  const upstream = await QuorateTarget.start({ nodes: o.nodes, seed: o.seed, clusterId: 'east' });
  let downstream: QuorateTarget;
  try {
    downstream = await QuorateTarget.start({
      nodes: o.nodes,
      seed: o.seed + 1,
      clusterId: 'west',
      // a short reconnect delay: the link's upstream members are killed too
      federation: {
        upstreams: [
          {
            name: 'east',
            urls: upstream.urls,
            queues: [...o.queues],
            ...(topics.length > 0 ? { topics: [...topics] } : {}),
            reconnectDelayMs: 500,
          },
        ],
      },
    });
  } catch (err) {
    await upstream.stop();
    throw err;
  }
  try {
    await topicLinksRunning(downstream.cluster, topics);
  } catch (err) {
    await Promise.all([upstream.stop(), downstream.stop()]);
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
