/**
 * What a federation link needs from the broker it feeds: the demand of a queue (its consumers'
 * unused credit, its available messages) and an enqueue that resolves at the commit point (the
 * backend's submit: fsynced on a single node, on a majority in a cluster;
 * docs/federation.md#exactly-once), deduplicated by message-id like a `quorate:dedup` sender's.
 */
import type { EnqueueResult } from '../core/results.js';
import type { BrokerBackend } from '../server/backend.js';
import type { BrokerServer } from '../server/broker-server.js';
import { enqueueEventFor } from '../server/publisher-link.js';

export interface LocalQueues {
  /** Our cluster id (`--cluster-id`): what routes are checked against. */
  readonly clusterId: string;
  /** Unused link credit of the local consumers of `queue`. */
  unusedConsumerCredit(queue: string): number;
  /** Messages of `queue` a consumer could take now (0 when it does not exist). */
  available(queue: string): number;
  /** Commits `message` (encoded) into `queue`; resolves once committed. */
  enqueue(queue: string, message: Uint8Array): Promise<EnqueueResult>;
}

/**
 * The LocalQueues of an AMQP server over its backend. `elsewhere`: the unused credit of the
 * queue's consumers on the other members of a cluster (as their status messages last said).
 */
export function localQueuesOf(
  server: BrokerServer,
  backend: BrokerBackend,
  clusterId: string,
  elsewhere: (queue: string) => number = () => 0,
): LocalQueues {
  return {
    clusterId,
    unusedConsumerCredit: (queue) => server.unusedConsumerCredit(queue) + elsewhere(queue),
    available: (queue) => backend.state.queueInfo(queue)?.available ?? 0,
    enqueue: (queue, message) => backend.submit(enqueueEventFor(message, queue, backend.now(), true)),
  };
}
