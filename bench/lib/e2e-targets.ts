/**
 * The e2e bench's targets (bench/e2e.ts, bench/report.ts): the brokers it can run against, by the
 * name `--targets` takes and the name its tables print, which run without `--targets`, and how
 * each is started.
 */
import {
  buildProtonBroker,
  type RunningBroker,
  startOurBroker,
  startOurCluster,
  startProtonBroker,
  startRabbitBroker,
  startRabbitQuorumCluster,
} from './brokers.js';

export type TargetName = 'single' | 'cluster' | 'rabbitmq' | 'proton' | 'rabbitmq-quorum';
export const TARGETS: Record<TargetName, string> = {
  single: 'quorate-broker, one node, durable',
  cluster: 'quorate-broker, 3 members',
  rabbitmq: 'RabbitMQ 3.10, classic queue',
  proton: 'Qpid Proton C example broker',
  'rabbitmq-quorum': 'RabbitMQ 3.10, quorum queue, 3 nodes',
};
/** Without --targets: every target but the RabbitMQ cluster, which only runs when named. */
export const DEFAULT_TARGETS: TargetName[] = ['single', 'cluster', 'rabbitmq', 'proton'];
/** Every target, in the order the tables print them. */
export const ALL_TARGETS = Object.keys(TARGETS) as TargetName[];

export async function startTarget(target: TargetName, brokerNodeArgs: string[]): Promise<RunningBroker> {
  switch (target) {
    case 'single':
      return startOurBroker(true, brokerNodeArgs);
    case 'cluster':
      return startOurCluster(brokerNodeArgs);
    case 'rabbitmq':
      return startRabbitBroker();
    case 'proton':
      return startProtonBroker(buildProtonBroker());
    case 'rabbitmq-quorum':
      return startRabbitQuorumCluster();
  }
}
