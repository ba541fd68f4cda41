/** `quorate-broker [flags]`: one single-node broker until SIGTERM / SIGINT. */
import { readFile } from 'node:fs/promises';
import { type StartBrokerOptions, startBroker } from '../assembly/start-broker.js';
import type { QueueOptions } from '../core/events.js';
import { systemMemory } from '../server/resource-alarm.js';
import { QUARANTINE_DIR, StoreCorruptionError } from '../store/index.js';
import { createCliLogger } from './cli-logger.js';
import { flagsOrExit } from './flags.js';
import type { CliIo } from './io.js';
import { parseSingleNodeArgs, SINGLE_NODE_USAGE, type SingleNodeArgs } from './single-node-args.js';
import { explainSystemError } from './system-errors.js';

export async function brokerOptionsFromArgs(a: SingleNodeArgs): Promise<StartBrokerOptions> {
  const queueDefaults: QueueOptions = {};
  if (a.maxQueueMessages !== undefined) queueDefaults.maxMessages = a.maxQueueMessages;
  if (a.maxQueueBytes !== undefined) queueDefaults.maxBytes = a.maxQueueBytes;
  if (a.deliveryLimit !== undefined) queueDefaults.deliveryLimit = a.deliveryLimit;
  if (a.dedupWindowCount !== undefined) queueDefaults.dedupWindowCount = a.dedupWindowCount;
  if (a.dedupWindowMs !== undefined) queueDefaults.dedupWindowMs = a.dedupWindowMs;
  const o: StartBrokerOptions = {
    port: a.port,
    host: a.host,
    anonymous: a.anonymous,
    autoCreateQueues: a.autoCreateQueues,
    queueDefaults,
  };
  if (a.dedup) o.dedup = true;
  if (a.dataDir !== undefined) o.dataDir = a.dataDir;
  if (a.usersFile !== undefined) o.usersFile = a.usersFile;
  if (a.permissionsFile !== undefined) o.permissionsFile = a.permissionsFile;
  if (a.requireTlsForPlain !== undefined) o.requireTlsForPlain = a.requireTlsForPlain;
  if (a.maxConnectionsPerAddress !== undefined) o.maxConnectionsPerAddress = a.maxConnectionsPerAddress;
  if (a.maxSessionsPerConnection !== undefined) o.channelMax = a.maxSessionsPerConnection - 1;
  if (a.maxLinksPerConnection !== undefined) o.maxLinksPerConnection = a.maxLinksPerConnection;
  if (a.maxQueuesPerConnection !== undefined) o.maxQueuesPerConnection = a.maxQueuesPerConnection;
  if (a.maxMemory !== undefined) {
    o.maxMemory =
      typeof a.maxMemory === 'number' ? a.maxMemory : Math.floor(systemMemory() * a.maxMemory.fraction);
  }
  if (a.minDiskFree !== undefined) o.minDiskFree = a.minDiskFree;
  if (a.tlsCert !== undefined && a.tlsKey !== undefined) {
    o.tls = { cert: await readFile(a.tlsCert), key: await readFile(a.tlsKey) };
  }
  if (a.maxConnections !== undefined) o.maxConnections = a.maxConnections;
  if (a.maxFrameSize !== undefined) o.maxFrameSize = a.maxFrameSize;
  if (a.maxMessageSize !== undefined) o.maxMessageSize = a.maxMessageSize;
  if (a.idleTimeoutMs !== undefined) o.idleTimeoutMs = a.idleTimeoutMs;
  if (a.ownerGraceMs !== undefined) o.dynamicNodeGraceMs = a.ownerGraceMs;
  if (a.containerId !== undefined) o.containerId = a.containerId;
  if (a.clusterId !== undefined) o.clusterId = a.clusterId;
  if (a.federationFile !== undefined) o.federation = a.federationFile;
  if (a.httpPort !== undefined) o.httpPort = a.httpPort;
  if (a.httpHost !== undefined) o.httpHost = a.httpHost;
  if (a.httpMaxConnections !== undefined) o.httpLimits = { maxConnections: a.httpMaxConnections };
  if (a.httpAllowedHosts !== undefined) o.httpAllowedHosts = a.httpAllowedHosts;
  if (a.wsPort !== undefined)
    o.webSocket = { port: a.wsPort, ...(a.wsAllowOrigins ? { allowOrigins: a.wsAllowOrigins } : {}) };
  return o;
}

/** What an operator can do when the store refused to open (printed after the error). */
export function damagedStoreAdvice(dataDir: string): string {
  return `The store is damaged beyond a torn tail (a crash mid-write), so starting would silently lose
acknowledged messages; nothing was changed. Either:
  - restore ${dataDir} from a backup, or
  - run again with --repair: the damaged files move to ${dataDir}/${QUARANTINE_DIR}/<time>/ and the
    broker starts from the intact part of the log (the damaged records and every record after
    them are dropped; the count is logged).
See "Running in production" (docs/production.md).
`;
}

export async function runSingleNodeCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = flagsOrExit('quorate-broker', argv, parseSingleNodeArgs, SINGLE_NODE_USAGE, io);
  if (typeof args === 'number') return args;
  const logger = createCliLogger(args.logLevel, io.stderr);
  if (!args.anonymous && args.usersFile === undefined) {
    logger.warn({}, '--no-anonymous without --users: no client can authenticate');
  }
  if (args.dataDir === undefined) {
    logger.warn({}, 'no --data-dir: messages are kept in memory only');
    if (args.repair) logger.warn({}, '--repair without --data-dir: there is no store to repair');
  }
  let resolveStop!: () => void;
  const stopRequested = new Promise<void>((r) => {
    resolveStop = r;
  });
  let storeFailed = false;
  let handle: Awaited<ReturnType<typeof startBroker>>;
  try {
    const options = await brokerOptionsFromArgs(args);
    options.logger = logger;
    options.store = {
      logger,
      repair: args.repair,
      // a disk that failed a write or fsync cannot promise anything any more: stop, exit 1
      onFailure: (err) => {
        storeFailed = true;
        io.stderr.write(`event store failed, stopping: ${err.message}\n`);
        resolveStop();
      },
    };
    handle = await startBroker(options);
  } catch (err) {
    io.stderr.write(`cannot start the broker: ${explainSystemError(err)}\n`);
    if (err instanceof StoreCorruptionError) io.stderr.write(damagedStoreAdvice(args.dataDir ?? ''));
    return 1;
  }
  const signals = io.signals ?? process;
  signals.on('SIGTERM', resolveStop);
  signals.on('SIGINT', resolveStop);
  const ready: Record<string, unknown> = { ready: true, amqpPort: handle.port, pid: process.pid };
  if (handle.httpUrl !== undefined) ready.httpPort = Number(new URL(handle.httpUrl).port);
  if (handle.wsUrl !== undefined) ready.wsPort = Number(new URL(handle.wsUrl).port);
  io.stdout.write(`${JSON.stringify(ready)}\n`);
  await stopRequested;
  signals.off('SIGTERM', resolveStop);
  signals.off('SIGINT', resolveStop);
  try {
    await handle.stop();
  } catch (err) {
    io.stderr.write(`error while stopping: ${(err as Error).message}\n`);
    return 1;
  }
  return storeFailed ? 1 : 0;
}
