/**
 * What a federation link needs from the broker it feeds: the demand of a queue (its consumers'
 * unused credit, its available messages), an enqueue and a topic publish that resolve at the
 * commit point (the backend's submit: fsynced on a single node, on a majority in a cluster;
 * docs/federation.md#exactly-once), deduplicated by message-id like a `quorate:dedup` sender's.
 */
import type { QueueOptions } from '../core/events.js';
import type { EnqueueResult } from '../core/results.js';
import type { BrokerBackend } from '../server/backend.js';
import type { BrokerServer } from '../server/broker-server.js';
import { enqueueEventFor } from '../server/publisher-link.js';
import { topicOptions } from '../server/topic-attach.js';

export interface LocalQueues {
  /** Our cluster id (`--cluster-id`): what routes are checked against. */
  readonly clusterId: string;
  /** Unused link credit of the local consumers of `queue`. */
  unusedConsumerCredit(queue: string): number;
  /**
   * Calls `listener` when that credit may have grown here (a consumer's flow, a delivery taken),
   * at most once per microtask batch; returns the way to stop.
   */
  watchDemand(queue: string, listener: () => void): () => void;
  /** Messages of `queue` a consumer could take now (0 when it does not exist). */
  available(queue: string): number;
  /**
   * Commits `message` (encoded, a buffer of the caller's own: kept by the event as it is when its
   * header already has first-acquirer set, copy.ts) into `queue`; resolves once committed.
   */
  enqueue(queue: string, message: Uint8Array): Promise<EnqueueResult>;
  /**
   * Commits one publish of `message` (encoded, the caller's own, as for `enqueue`) to `topic` (declared first when it does not exist
   * yet): it reaches every subscription existing when it commits; resolves once committed.
   */
  publish(topic: string, message: Uint8Array): Promise<EnqueueResult>;
}

/**
 * The LocalQueues of an AMQP server over its backend. `elsewhere`: the unused credit of the
 * queue's consumers on the other members of a cluster (as their status messages last said).
 * `queueDefaults`: the broker's, whose dedup window a topic declared here gets.
 */
export function localQueuesOf(
  server: BrokerServer,
  backend: BrokerBackend,
  clusterId: string,
  elsewhere: (queue: string) => number = () => 0,
  queueDefaults?: QueueOptions,
): LocalQueues {
  return {
    clusterId,
    unusedConsumerCredit: (queue) => server.unusedConsumerCredit(queue) + elsewhere(queue),
    watchDemand: (queue, listener) => server.watchConsumerDemand(queue, listener),
    available: (queue) => backend.state.queueInfo(queue)?.available ?? 0,
    // the link's copy is its own buffer, already in the stored form (copy.ts): kept as it is
    enqueue: (queue, message) => backend.submit(enqueueEventFor(message, queue, backend.now(), true, true)),
    publish: async (topic, message) => {
      const info = backend.state.queueInfo(topic);
      if (info !== undefined && info.options.topic !== true)
        return {
          type: 'enqueue',
          status: 'refused',
          condition: 'amqp:not-allowed',
          description: `'${topic}' is a queue here, not a topic`,
        };
      // submission order is commit order: the declare applies before the publish (a declare of a
      // topic that exists by then does nothing); a failed declare gets the publish refused
      if (info === undefined)
        backend
          .submit({
            type: 'declare',
            leaderTime: backend.now(),
            queue: topic,
            options: topicOptions(queueDefaults),
          })
          .catch(() => undefined);
      return backend.submit(enqueueEventFor(message, topic, backend.now(), true, true));
    },
  };
}
