/** `startBroker()`: a single-node broker in this process (tests, embedding, the CLI). */
import type { QueueInfo } from '../core/broker-state.js';
import { secureDataDir } from '../store/file-modes.js';
import type { StoreOptions, StoreStats } from '../store/index.js';
import type { BrokerBackend } from './backend.js';
import { BrokerServer, type BrokerServerStats } from './broker-server.js';
import { type LocalBackend, memoryBackend, openLocalBackend } from './local-backend.js';
import type { BrokerServerOptions } from './options.js';
import { loadPermissionsFile } from './permissions.js';
import { loadUsersFile, type UserTable } from './users.js';

export interface StartBrokerOptions extends Omit<BrokerServerOptions, 'backend'> {
  /** The node's store directory. Absent: everything is kept in memory only (nothing survives a stop). */
  dataDir?: string;
  /** SASL PLAIN users file (`user:HASH` per line, written by `quorate-broker passwd`); merged over `users`. */
  usersFile?: string;
  /** Permissions file (JSON, see `permissions`); used when `permissions` is absent. */
  permissionsFile?: string;
  /** Event store tuning (segment size, failure hook). */
  store?: StoreOptions;
  /** Use this backend instead of a local one (a cluster member passes its replicated backend). */
  backend?: BrokerBackend;
}

export interface BrokerStats extends BrokerServerStats {
  queues: QueueInfo[];
  store?: StoreStats;
}

export interface BrokerHandle {
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly server: BrokerServer;
  readonly backend: BrokerBackend;
  /** Closes every connection, stops listening, flushes and closes the store (a local backend). */
  stop(): Promise<void>;
  stats(): BrokerStats;
}

export async function startBroker(options: StartBrokerOptions = {}): Promise<BrokerHandle> {
  const { dataDir, usersFile, permissionsFile, store, backend: given, ...serverOpts } = options;
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
  let local: LocalBackend | undefined;
  let backend: BrokerBackend;
  if (given) backend = given;
  else {
    local = dataDir === undefined ? memoryBackend() : await openLocalBackend(dataDir, store ? { store } : {});
    backend = local;
  }
  const server = new BrokerServer({ ...serverOpts, users, backend });
  try {
    await server.listen();
  } catch (err) {
    await local?.close();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    host: server.host,
    server,
    backend,
    stop() {
      stopped ??= (async () => {
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
