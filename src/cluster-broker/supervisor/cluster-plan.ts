import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIR_MODE } from '../files/file-modes.js';
import { SupervisorError } from './errors.js';
import { reserveFreePorts } from './ports.js';

/** Cluster port of member i = its AMQP port + this, with a base port (5672 -> 6672). */
export const CLUSTER_PORT_OFFSET = 1000;

/** Ids, ports and store dirs of a local cluster, decided before any member starts. */
export interface ClusterPlan {
  ids: string[];
  amqpPorts: number[];
  clusterPorts: number[];
  /** Monitoring ports (member i: httpBasePort+i, or free ports); undefined: no HTTP. */
  httpPorts: number[] | undefined;
  /** AMQP-over-WebSocket ports (member i: wsBasePort+i, or free ports); undefined: none. */
  wsPorts: number[] | undefined;
  dataDir: string;
  /** True when `dataDir` is a temp dir made here (its owner removes it on stop). */
  createdDataDir: boolean;
  /**
   * Free ports picked here stay held until this is called: call it once the proxies (which bind
   * port 0) are up and just before the members start. A no-op for fixed ports.
   */
  releasePorts(): Promise<void>;
}

/** A per-member port range `base`..`base + nodes - 1` (`--http-base-port`, `--ws-base-port`) must fit. */
function checkBasePort(what: string, base: number | undefined, nodes: number): void {
  if (base !== undefined && (!Number.isInteger(base) || base < 0 || base + nodes > 65_536)) {
    throw new SupervisorError(
      'amqp:invalid-field',
      `${what} base port ${base} leaves no room for ${nodes} members`,
    );
  }
}

/**
 * Member i is `n<i+1>`, with AMQP port basePort+i and cluster port basePort+1000+i (5672 ->
 * 6672, as in the docs), or free ports when basePort is 0; HTTP port httpBasePort+i when asked. Ports are fixed for the cluster's
 * life, so a restarted member comes back at the same addresses. Creates `<dataDir>/<id>`.
 */
export async function planCluster(options: {
  nodes: number;
  basePort?: number;
  /** Member i serves HTTP on httpBasePort+i; 0: free ports; undefined: no HTTP. */
  httpBasePort?: number;
  /** Member i serves AMQP over WebSocket on wsBasePort+i; 0: free ports; undefined: none. */
  wsBasePort?: number;
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
  const { httpBasePort, wsBasePort } = options;
  checkBasePort('HTTP', httpBasePort, nodes);
  checkBasePort('WebSocket', wsBasePort, nodes);
  // every free port in one reservation, so no two are the same
  const freeAmqp = basePort > 0 ? 0 : 2 * nodes;
  const freeHttp = httpBasePort === 0 ? nodes : 0;
  const freeWs = wsBasePort === 0 ? nodes : 0;
  const reservation = await reserveFreePorts(freeAmqp + freeHttp + freeWs);
  const free = reservation.ports;
  const amqpPorts = basePort > 0 ? ids.map((_, i) => basePort + i) : free.slice(0, nodes);
  const clusterPorts =
    basePort > 0 ? ids.map((_, i) => basePort + CLUSTER_PORT_OFFSET + i) : free.slice(nodes, 2 * nodes);
  const httpPorts =
    httpBasePort === undefined
      ? undefined
      : httpBasePort > 0
        ? ids.map((_, i) => httpBasePort + i)
        : free.slice(freeAmqp, freeAmqp + nodes);
  // fixed like the others, so a restarted member keeps the ws URL the clients learned
  const wsPorts =
    wsBasePort === undefined
      ? undefined
      : wsBasePort > 0
        ? ids.map((_, i) => wsBasePort + i)
        : free.slice(freeAmqp + freeHttp, freeAmqp + freeHttp + nodes);
  const createdDataDir = options.dataDir === undefined;
  try {
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'quorate-cluster-')));
    await mkdir(dataDir, { recursive: true, mode: DIR_MODE });
    await Promise.all(ids.map((id) => mkdir(join(dataDir, id), { recursive: true, mode: DIR_MODE })));
    return {
      ids,
      amqpPorts,
      clusterPorts,
      httpPorts,
      wsPorts,
      dataDir,
      createdDataDir,
      releasePorts: reservation.release,
    };
  } catch (err) {
    await reservation.release();
    throw err;
  }
}
