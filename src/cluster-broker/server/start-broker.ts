/** `startBroker()`: a single-node broker in this process (tests, embedding, the CLI). */
import type { QueueInfo } from '../core/broker-state.js';
import type { StoreOptions, StoreStats } from '../store/index.js';
import type { BrokerBackend } from './backend.js';
import { BrokerServer, type BrokerServerStats } from './broker-server.js';
import { type LocalBackend, memoryBackend, openLocalBackend } from './local-backend.js';
import type { BrokerServerOptions } from './options.js';
import { loadUsersFile } from './users.js';

/** Options of {@link startBroker}. */
export interface StartBrokerOptions extends Omit<BrokerServerOptions, 'backend'> {
  /** The node's store directory. Absent: everything is kept in memory only (nothing survives a stop). */
  dataDir?: string;
  /** SASL PLAIN users file (`user:password` per line); merged over `users`. */
  usersFile?: string;
  /** Event store tuning (segment size, failure hook). */
  store?: StoreOptions;
  /** @internal Use this backend instead of a local one (a cluster member passes its replicated backend). */
  backend?: BrokerBackend;
}

/** What {@link BrokerHandle.stats} reports. */
export interface BrokerStats extends BrokerServerStats {
  /** Every queue and its size. */
  queues: QueueInfo[];
  /** The durable store's counters (a broker with a `dataDir`). */
  store?: StoreStats;
}

/** A running single-node broker, from {@link startBroker}. */
export interface BrokerHandle {
  /** `amqp://host:port` (`amqps://` with TLS). */
  readonly url: string;
  /** The port it listens on (the one chosen, when started with port 0). */
  readonly port: number;
  /** The host it listens on. */
  readonly host: string;
  /** The AMQP server. */
  readonly server: BrokerServer;
  /** @internal */
  readonly backend: BrokerBackend;
  /** Closes every connection, stops listening, flushes and closes the store (a local backend). */
  stop(): Promise<void>;
  /** Connection, consumer, queue and store counters. */
  stats(): BrokerStats;
}

/**
 * Starts a single-node broker in this process; resolves once it listens. With `dataDir` it
 * keeps its queues in a durable store (fsync before every acknowledgement), else in memory.
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<BrokerHandle> {
  const { dataDir, usersFile, store, backend: given, ...serverOpts } = options;
  let users = serverOpts.users;
  if (usersFile !== undefined) {
    const fromFile = await loadUsersFile(usersFile);
    users = new Map([...(users ?? new Map<string, string>()), ...fromFile]);
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
