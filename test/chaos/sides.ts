/**
 * The clusters of a chaos run, each with its own nemesis: one target (the reference cluster or
 * RabbitMQ), or with `--federation` two federated reference clusters (federation.ts). The
 * producers send to the first.
 */
import type { MemberFederationLink } from '../../src/broker.js';
import { startFederatedPair } from './federation.js';
import { QuorateTarget } from './quorate-target.js';
import { RabbitTarget } from './rabbit-target.js';
import type { ChaosTarget } from './target.js';

/** One cluster under test, its consumers' process-name prefix, and who its "client" member is. */
export interface Side {
  name: string;
  target: ChaosTarget;
  /** does it have consumers (federation: east only with `consumersOn: 'both'`) */
  consumers: boolean;
  /** the member `victims: 'client'` hits (undefined: the producers' member) */
  clientMember?: () => string | undefined;
  /** federation downstream: its links as its members report them now */
  federationLinks?: () => Promise<MemberFederationLink[]>;
}

/** The clusters of a run: the producers' first. */
export async function startSides(o: {
  target: 'quorate' | 'rabbitmq';
  federation: boolean;
  /** federation: consumers on both clusters, or on the downstream only */
  consumersOn: 'both' | 'downstream';
  nodes: number;
  seed: number;
  queues: readonly string[];
  /** federation: topics west federates too (`--topic`) */
  topics?: readonly string[];
}): Promise<{ sides: Side[]; stop(): Promise<void> }> {
  const { nodes, seed, queues } = o;
  if (o.federation) {
    if (o.target !== 'quorate')
      throw new Error('--federation runs two quorate clusters; it takes no --target');
    const pair = await startFederatedPair({ nodes, seed, queues, topics: o.topics });
    return {
      sides: [
        { name: 'east', target: pair.upstream, consumers: o.consumersOn === 'both' },
        // the downstream's client is the member running the link
        {
          name: 'west',
          target: pair.downstream,
          consumers: true,
          clientMember: pair.linkOwner,
          federationLinks: () => pair.downstream.cluster.federation(),
        },
      ],
      stop: () => pair.stop(),
    };
  }
  const target =
    o.target === 'rabbitmq' ? await RabbitTarget.start(3) : await QuorateTarget.start({ nodes, seed });
  return { sides: [{ name: '', target, consumers: true }], stop: () => target.stop() };
}
