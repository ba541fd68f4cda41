import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkFederationConfig, type FederationConfig } from '../federation/config.js';
import type { FederationLinkState } from '../federation/link-state.js';
import { FILE_MODE } from '../files/file-modes.js';
import type { FederationDocument } from '../http/types.js';
import { type CutMode, ProxyMesh } from '../netproxy/index.js';
import { ensureClusterSecret } from '../replication/cluster-secret.js';
import { type PermissionsConfig, parsePermissions } from '../server/permissions.js';
import type { ClusterHandle } from './cluster-handle.js';
import { planCluster } from './cluster-plan.js';
import {
  type ClusterMemberLaunch,
  type ClusterTlsFiles,
  defaultMemberCommand,
} from './default-member-command.js';
import type { MemberOutputHandler } from './member-process.js';
import { Supervisor } from './supervisor.js';
import type { MemberCommand, MemberInfo, RestartPolicy, SupervisorLogger } from './types.js';
import { waitServing } from './wait-serving.js';

/** Options of {@link startCluster}. */
export interface StartClusterOptions {
  /** Number of members (ids n1..nN). Default 3. */
  nodes?: number;
  /** Parent of the members' store dirs (`<dataDir>/<id>`). Default: a fresh temp dir, removed by `stop()`. */
  dataDir?: string;
  /**
   * AMQP ports basePort..basePort+N-1 and cluster ports basePort+1000.. (5672 -> 6672 as in the
   * docs). 0 or undefined: free ports chosen by the OS.
   */
  basePort?: number;
  /** SASL PLAIN users file for every member (`--users`, written by `quorate-broker passwd`). */
  usersFile?: string;
  /**
   * Who may send to / receive from which address, for every member (`--permissions`): a file
   * path, or the document itself (written to `<dataDir>/permissions.json`, mode 0600).
   */
  permissions?: string | PermissionsConfig;
  /** More server flags for every member (`--no-anonymous`, `--max-memory 512M`, ...). */
  memberArgs?: readonly string[];
  /**
   * Member i serves its status page and monitoring endpoints on httpBasePort+i-1 (n1 on
   * httpBasePort). Default 0: free ports. `false`: no HTTP.
   */
  httpBasePort?: number | false;
  /**
   * Member i serves AMQP over WebSocket on wsBasePort+i-1 (n1 on wsBasePort; `wss://` when
   * `memberArgs` give a TLS certificate), fixed for the cluster's life. 0: free ports. Default:
   * no WebSocket (docs/websocket.md#broker).
   */
  wsBasePort?: number;
  /**
   * The cluster secret every member is given (`--cluster-secret-file`). Default: a random one
   * created (mode 0600) as `<dataDir>/cluster-secret`, or the one already there.
   */
  clusterSecretFile?: string;
  /** PEM files for mutual TLS between members (one certificate shared by every member). */
  clusterTls?: ClusterTlsFiles;
  /** How to start a member. Default `defaultMemberCommand` (the real `quorate-broker node`). */
  memberCommand?: (member: ClusterMemberLaunch) => MemberCommand;
  /**
   * Restart members that die unexpectedly (crash, or SIGKILLed by PID from outside the handle),
   * with backoff. Default true. `kill(id)` through the handle never auto-restarts: the member
   * stays down until `restart(id)`, so a test controls when it returns.
   */
  autoRestart?: boolean;
  /** Backoff of automatic restarts. */
  restartPolicy?: Partial<RestartPolicy>;
  /** Deadline for every member's ready line. Default 60_000 ms. */
  readyTimeoutMs?: number;
  /**
   * Resolve only once every member serves (quorate and caught up: its `/readyz` answers 200),
   * within `readyTimeoutMs` more; see docs/cluster-member.md#serving. Default true, unless
   * `httpBasePort` is false or a `memberCommand` is given (then the ready lines are enough).
   */
  waitServing?: boolean;
  /** SIGTERM grace before SIGKILL on stop/restart. Default 10_000 ms. */
  stopTimeoutMs?: number;
  /** Seed of the lossy-link PRNGs. Default 1. */
  seed?: number;
  /** How partitions cut links: 'reset' (default) or 'blackhole' (see `CutMode`). */
  cutMode?: CutMode;
  /** Where the supervisor logs member starts, exits and restarts. Default: silent. */
  logger?: SupervisorLogger;
  /** Every line a member prints besides its ready line (its logs are on stderr). Default: dropped. */
  onMemberOutput?: MemberOutputHandler;
  /** Every member deduplicates by message-id on every queue, for every sender (`--dedup`). Default false. */
  dedup?: boolean;
  /** The cluster's id (`--cluster-id` of every member). Default 'quorate'; federated clusters need their own. */
  clusterId?: string;
  /**
   * Queue federation into this cluster (`--federation`, docs/federation.md): a file path, or the
   * document itself (written to `<dataDir>/federation.json`, mode 0600). One member at a time
   * runs the links.
   */
  federation?: string | FederationConfig;
}

/** One member's view of one federation link, from {@link ClusterHandle.federation}. */
export interface MemberFederationLink extends FederationLinkState {
  /** The member that reported it. */
  member: string;
}

/** Each member's `/api/federation`, members that do not answer left out. */
async function federationOf(members: readonly MemberInfo[]): Promise<MemberFederationLink[]> {
  const answers = await Promise.all(
    members.map(async (m): Promise<MemberFederationLink[]> => {
      if (m.httpUrl === null) return [];
      try {
        const res = await fetch(`${m.httpUrl}/api/federation`, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) return [];
        const doc = (await res.json()) as FederationDocument;
        return doc.links.map((l) => ({ ...l, member: m.id }));
      } catch {
        return [];
      }
    }),
  );
  return answers.flat();
}

/**
 * Starts a local cluster of `nodes` member processes under a `Supervisor`, members talking to
 * each other through a `ProxyMesh`. All members start at once; resolves when every member serves
 * (see `waitServing` in the options).
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<ClusterHandle> {
  // a bad permissions or federation document fails here, before anything starts, not in every member
  if (typeof options.permissions === 'object') parsePermissions(options.permissions);
  if (typeof options.federation === 'object') checkFederationConfig(options.federation);
  const { ids, amqpPorts, clusterPorts, httpPorts, wsPorts, dataDir, createdDataDir, releasePorts } =
    await planCluster({
      nodes: options.nodes ?? 3,
      basePort: options.basePort,
      httpBasePort: options.httpBasePort === false ? undefined : (options.httpBasePort ?? 0),
      ...(options.wsBasePort !== undefined ? { wsBasePort: options.wsBasePort } : {}),
      dataDir: options.dataDir,
    });

  let mesh: ProxyMesh;
  let clusterSecretFile: string;
  try {
    clusterSecretFile = options.clusterSecretFile ?? (await ensureClusterSecret(dataDir));
    // the proxies bind port 0 while the members' ports are still held, so none is given one of them
    mesh = await ProxyMesh.start({
      members: ids.map((id, i) => ({ id, clusterPort: clusterPorts[i]! })),
      seed: options.seed,
      cutMode: options.cutMode,
    });
  } finally {
    await releasePorts();
  }
  const memberCommand = options.memberCommand ?? defaultMemberCommand;
  const extraArgs = [...(options.memberArgs ?? [])];
  if (options.usersFile !== undefined) extraArgs.push('--users', options.usersFile);
  // a document given inline goes to a file in the data dir, for the members' flag
  const fileOf = async (value: string | object, name: string): Promise<string> => {
    if (typeof value === 'string') return value;
    const file = join(dataDir, name);
    await writeFile(file, JSON.stringify(value), { mode: FILE_MODE });
    return file;
  };
  if (options.permissions !== undefined)
    extraArgs.push('--permissions', await fileOf(options.permissions, 'permissions.json'));
  if (options.federation !== undefined)
    extraArgs.push('--federation', await fileOf(options.federation, 'federation.json'));
  if (options.clusterId !== undefined) extraArgs.push('--cluster-id', options.clusterId);
  const supervisor = new Supervisor({
    members: ids.map((id, index) => ({
      id,
      amqpPort: amqpPorts[index]!,
      clusterPort: clusterPorts[index]!,
      ...(httpPorts ? { httpPort: httpPorts[index]! } : {}),
      ...(wsPorts ? { wsPort: wsPorts[index]! } : {}),
      command: () => {
        const peers = mesh.peersFor(id);
        return memberCommand({
          id,
          index,
          amqpPort: amqpPorts[index]!,
          clusterPort: clusterPorts[index]!,
          ...(httpPorts ? { httpPort: httpPorts[index]! } : {}),
          ...(wsPorts ? { wsPort: wsPorts[index]! } : {}),
          peers,
          peersArg: mesh.peersArg(id),
          dataDir: join(dataDir, id),
          clusterSecretFile,
          ...(options.clusterTls ? { clusterTls: options.clusterTls } : {}),
          extraArgs: [...extraArgs, ...(options.dedup ? ['--dedup'] : [])],
        });
      },
    })),
    autoRestart: options.autoRestart ?? true,
    restartPolicy: options.restartPolicy,
    readyTimeoutMs: options.readyTimeoutMs,
    stopTimeoutMs: options.stopTimeoutMs,
    logger: options.logger,
    ...(options.onMemberOutput ? { onMemberOutput: options.onMemberOutput } : {}),
  });

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      try {
        await supervisor.stop();
      } finally {
        await mesh.close();
        if (createdDataDir) await rm(dataDir, { recursive: true, force: true });
      }
    })();
    return stopped;
  };

  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const serving = (id: string | undefined, timeoutMs = readyTimeoutMs): Promise<void> =>
    waitServing(() => supervisor.members(), id === undefined ? ids : [id], timeoutMs);
  const waitForServing =
    options.waitServing ?? (options.httpBasePort !== false && options.memberCommand === undefined);
  try {
    await supervisor.start();
    if (waitForServing) await serving(undefined);
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    urls: supervisor.members().map((m) => m.url),
    httpUrls: supervisor.members().flatMap((m) => (m.httpUrl === null ? [] : [m.httpUrl])),
    wsUrls: supervisor.members().flatMap((m) => (m.wsUrl === null ? [] : [m.wsUrl])),
    ids,
    dataDir,
    clusterSecretFile,
    supervisor,
    mesh,
    members: () => supervisor.members(),
    kill: (id, killOptions) => supervisor.kill(id, killOptions),
    restart: (id) => supervisor.restart(id),
    pause: (id) => supervisor.pause(id),
    resume: (id) => supervisor.resume(id),
    partition: (groups) => mesh.partition(groups),
    ring: (order) => mesh.ring(order),
    heal: () => mesh.heal(),
    slow: (ms) => mesh.slow(ms),
    lossy: (p, seed) => mesh.lossy(p, seed),
    waitReady: (id, timeoutMs) => supervisor.waitReady(id, timeoutMs),
    waitServing: serving,
    federation: () => federationOf(supervisor.members()),
    stop,
  };
}
