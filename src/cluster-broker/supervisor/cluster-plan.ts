import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SupervisorError } from './errors.js';
import { allocateFreePorts } from './ports.js';

/** Cluster port of member i = its AMQP port + this, with a base port (5672 -> 6672). */
export const CLUSTER_PORT_OFFSET = 1000;

/** Ids, ports and store dirs of a local cluster, decided before any member starts. */
export interface ClusterPlan {
  ids: string[];
  amqpPorts: number[];
  clusterPorts: number[];
  dataDir: string;
  /** True when `dataDir` is a temp dir made here (its owner removes it on stop). */
  createdDataDir: boolean;
}

/**
 * Member i is `n<i+1>`, with AMQP port basePort+i and cluster port basePort+1000+i (5672 ->
 * 6672, as in the docs), or free ports when basePort is 0. Ports are fixed for the cluster's
 * life, so a restarted member comes back at the same addresses. Creates `<dataDir>/<id>`.
 */
export async function planCluster(options: {
  nodes: number;
  basePort?: number;
  dataDir?: string;
}): Promise<ClusterPlan> {
  const { nodes } = options;
  if (!Number.isInteger(nodes) || nodes < 1) {
    throw new SupervisorError('amqp:invalid-field', `nodes must be a positive integer, got ${nodes}`);
  }
  const basePort = options.basePort ?? 0;
  if (!Number.isInteger(basePort) || basePort < 0 || basePort + CLUSTER_PORT_OFFSET + nodes > 65_536) {
    throw new SupervisorError(
      'amqp:invalid-field',
      `base port ${basePort} leaves no room for ${nodes} members`,
    );
  }
  const ids = Array.from({ length: nodes }, (_, i) => `n${i + 1}`);
  let amqpPorts: number[];
  let clusterPorts: number[];
  if (basePort > 0) {
    amqpPorts = ids.map((_, i) => basePort + i);
    clusterPorts = ids.map((_, i) => basePort + CLUSTER_PORT_OFFSET + i);
  } else {
    const ports = await allocateFreePorts(2 * nodes);
    amqpPorts = ports.slice(0, nodes);
    clusterPorts = ports.slice(nodes);
  }
  const createdDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'quorate-cluster-')));
  await Promise.all(ids.map((id) => mkdir(join(dataDir, id), { recursive: true })));
  return { ids, amqpPorts, clusterPorts, dataDir, createdDataDir };
}
