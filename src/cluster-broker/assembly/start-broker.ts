/** `startBroker()`: a single-node broker in this process (tests, embedding, the CLI). */
import type { BrokerHandle, BrokerStats } from '../api.js';
import {
  Federation,
  type FederationConfig,
  loadFederationFile,
  localQueuesOf,
  resolveFederationConfig,
} from '../federation/index.js';
import { secureDataDir } from '../files/file-modes.js';
import type { HttpLimits } from '../http/http-limits.js';
import { monitoredBroker } from '../http/monitored-broker.js';
import { MonitoringServer } from '../http/monitoring-server.js';
import { singleNodeSource } from '../http/single-node-source.js';
import type { ClusterSource } from '../http/types.js';
import type { BrokerBackend } from '../server/backend.js';
import { BrokerServer } from '../server/broker-server.js';
import { type LocalBackend, memoryBackend, openLocalBackend } from '../server/local-backend.js';
import type { BrokerServerOptions } from '../server/options.js';
import { compilePermissions, loadPermissionsFile } from '../server/permissions.js';
import { singleNodeClusterId } from '../server/single-node-cluster-id.js';
import { loadUsersFile, type UserTable } from '../server/users.js';
import type { StoreOptions } from '../store/index.js';

/** Options of {@link startBroker}. */
export interface StartBrokerOptions extends Omit<BrokerServerOptions, 'backend'> {
  /** The node's store directory. Absent: everything is kept in memory only (nothing survives a stop). */
  dataDir?: string;
  /** SASL PLAIN users file (`user:HASH` per line, written by `quorate-broker passwd`); merged over `users`. */
  usersFile?: string;
  /** Permissions file (JSON, see `permissions`); used when `permissions` is absent. */
  permissionsFile?: string;
  /** Event store tuning (segment size, failure hook). */
  store?: StoreOptions;
  /** @internal Use this backend instead of a local one (a cluster member passes its replicated backend). */
  backend?: BrokerBackend;
  /** Serve the monitoring endpoints and status page on this port (0 = a free one). Absent: no HTTP. */
  httpPort?: number;
  /** Address the monitoring server binds. Default `host`, else 127.0.0.1. */
  httpHost?: string;
  /** The monitoring server's connection cap and deadlines (docs/monitoring.md#http-limits). */
  httpLimits?: HttpLimits;
  /**
   * Host names the monitoring server answers to besides IP addresses, `localhost` and `httpHost`
   * (`--http-allowed-hosts`): the names browsers and scrapers use (docs/security.md#http-port).
   */
  httpAllowedHosts?: readonly string[];
  /** @internal What the monitoring endpoints say about the cluster (a cluster member passes its own view). */
  clusterSource?: (broker: { url: string; httpUrl: () => string | null }) => ClusterSource;
  /**
   * Queue federation (docs/federation.md): the configuration, or the name of its JSON file
   * (`--federation FILE`). A single node runs its links from the start.
   */
  federation?: FederationConfig | string;
  /** @internal Unused credit of a queue's consumers on the other members (a cluster member passes it). */
  remoteConsumerCredit?: (queue: string) => number;
}

/**
 * What {@link startBroker} returns inside the package: the public {@link BrokerHandle} and the
 * parts a cluster member wires (its backend, its federation links) and tests read.
 */
export interface BrokerNode extends BrokerHandle {
  /** The AMQP server itself. */
  readonly server: BrokerServer;
  /** Where the server commits its events. */
  readonly backend: BrokerBackend;
  /** The links, for a cluster member to run while it owns them. */
  readonly federationLinks: Federation | undefined;
}

/**
 * Starts a single-node broker in this process; resolves once it listens. With `dataDir` it
 * keeps its queues in a durable store (fsync before every acknowledgement), else in memory.
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<BrokerNode> {
  const {
    dataDir,
    usersFile,
    permissionsFile,
    store,
    backend: given,
    httpPort,
    httpHost,
    httpLimits,
    httpAllowedHosts,
    clusterSource,
    federation: federationConfig,
    remoteConsumerCredit,
    ...serverOpts
  } = options;
  const upstreams =
    federationConfig === undefined
      ? []
      : typeof federationConfig === 'string'
        ? await loadFederationFile(federationConfig)
        : await resolveFederationConfig(federationConfig);
  let users: UserTable | undefined = serverOpts.users;
  if (usersFile !== undefined) {
    const fromFile = await loadUsersFile(usersFile);
    users = new Map([...(users ?? []), ...fromFile]);
  }
  if (serverOpts.permissions === undefined && permissionsFile !== undefined) {
    serverOpts.permissions = await loadPermissionsFile(permissionsFile);
  }
  if (dataDir !== undefined) {
    await secureDataDir(dataDir, serverOpts.logger);
    serverOpts.diskPath ??= dataDir;
  }
  // a cluster member passes its own (--cluster-id of `node`, default 'quorate')
  const clusterId = given
    ? (serverOpts.clusterId ?? 'quorate')
    : await singleNodeClusterId(serverOpts.clusterId, dataDir);
  serverOpts.clusterId = clusterId;
  let local: LocalBackend | undefined;
  let backend: BrokerBackend;
  // a snapshot copies the whole state in memory: the store waits while the memory limit has no room
  let server: BrokerServer | undefined;
  const storeOptions: StoreOptions = {
    ...store,
    holdCompaction: (bytes) =>
      store?.holdCompaction?.(bytes) === true || (server !== undefined && !server.hasMemoryFor(bytes)),
  };
  if (given) backend = given;
  else {
    local =
      dataDir === undefined ? memoryBackend() : await openLocalBackend(dataDir, { store: storeOptions });
    backend = local;
  }
  server = new BrokerServer({ ...serverOpts, users, backend });
  // the status page and API ask the same permissions for "monitor"
  const givenPermissions = serverOpts.permissions;
  const monitorPermissions =
    givenPermissions === undefined ? undefined : compilePermissions(givenPermissions);
  const federation =
    upstreams.length === 0
      ? undefined
      : new Federation({
          upstreams,
          local: localQueuesOf(server, backend, clusterId, remoteConsumerCredit, serverOpts.queueDefaults),
          logger: serverOpts.logger ?? {},
        });
  let monitoring: MonitoringServer | undefined;
  try {
    // a restarted single node has no connection left: its dynamic nodes are orphans (a cluster
    // member's may belong to clients of other members)
    if (local) await server.deleteOrphanDynamicNodes();
    await server.listen();
    if (httpPort !== undefined) {
      const httpUrl = (): string | null => monitoring?.url ?? null;
      const cluster =
        clusterSource?.({ url: server.url, httpUrl }) ??
        singleNodeSource({
          member: server.containerId,
          amqpUrl: server.url,
          httpUrl,
          backend,
          local,
        });
      monitoring = await MonitoringServer.start({
        broker: monitoredBroker(server),
        cluster,
        host: httpHost ?? serverOpts.host ?? '127.0.0.1',
        port: httpPort,
        ...(users !== undefined ? { users } : {}),
        ...(monitorPermissions !== undefined ? { permissions: monitorPermissions } : {}),
        ...(serverOpts.logger !== undefined ? { logger: serverOpts.logger } : {}),
        ...(federation !== undefined ? { federation: () => federation.state() } : {}),
        ...(httpLimits !== undefined ? { limits: httpLimits } : {}),
        ...(httpAllowedHosts !== undefined ? { allowedHosts: httpAllowedHosts } : {}),
        ...(serverOpts.authThrottle !== undefined ? { authThrottle: serverOpts.authThrottle } : {}),
      });
    }
  } catch (err) {
    await server.stop();
    await local?.close();
    throw err;
  }
  // a single node owns its links; a member runs them while the log names it (member.ts)
  if (local) await federation?.setActive(true);
  let stopped: Promise<void> | undefined;
  return {
    clusterId,
    federationLinks: federation,
    federation: () => federation?.state() ?? [],
    url: server.url,
    wsUrl: server.wsUrl,
    port: server.port,
    host: server.host,
    server,
    backend,
    httpUrl: monitoring?.url,
    stop() {
      stopped ??= (async () => {
        await federation?.stop();
        await monitoring?.stop();
        await server.stop();
        await local?.close();
      })();
      return stopped;
    },
    stats() {
      const s: BrokerStats = { ...server.stats(), queues: backend.state.listQueues() };
      const st = local?.stats();
      if (st) s.store = st;
      return s;
    },
  };
}
