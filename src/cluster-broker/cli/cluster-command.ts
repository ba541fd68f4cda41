import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { formatPeers } from '../netproxy/index.js';
import { ensureClusterSecret } from '../replication/cluster-secret.js';
import { CLUSTER_PORT_OFFSET, planCluster } from '../supervisor/cluster-plan.js';
import {
  type ClusterMemberLaunch,
  defaultMemberCommand,
  memberNodeArgs,
} from '../supervisor/default-member-command.js';
import { portsInUse } from '../supervisor/ports.js';
import { Supervisor } from '../supervisor/supervisor.js';
import type { MemberCommand, MemberInfo, RestartPolicy, SupervisorLogger } from '../supervisor/types.js';
import { createCliLogger, DEFAULT_LOG_LEVEL } from './cli-logger.js';
import { CLUSTER_USAGE, parseClusterArgs } from './cluster-args.js';
import { flagsOrExit } from './flags.js';
import { explainSystemError } from './system-errors.js';

interface LineSink {
  write(chunk: string): unknown;
}

/** What `runClusterCommand` talks to; the CLI passes the real process streams. */
export interface ClusterCommandIo {
  stdout: LineSink;
  stderr: LineSink;
  /** Where SIGTERM / SIGINT arrive. Default `process`. */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
  /** Stops the cluster like SIGTERM does (for embedding and tests). */
  abort?: AbortSignal;
  /** How to start a member. Default `selfMemberCommand` (this same CLI entry, `node` subcommand). */
  memberCommand?: (member: ClusterMemberLaunch) => MemberCommand;
  restartPolicy?: Partial<RestartPolicy>;
  logger?: SupervisorLogger;
}

/**
 * Re-runs the program that is running now (same Node, same flags such as tsx's loader, same
 * entry script) with the `node` subcommand, so `quorate-broker cluster` starts members of its own
 * version whether it runs from `dist/` or from source.
 */
export function selfMemberCommand(member: ClusterMemberLaunch): MemberCommand {
  const entry = process.argv[1];
  if (entry === undefined) return defaultMemberCommand(member);
  return { command: process.execPath, args: [...process.execArgv, entry, ...memberNodeArgs(member)] };
}

function memberLine(event: string, m: MemberInfo): string {
  return `${JSON.stringify({
    event,
    id: m.id,
    pid: m.pid,
    amqpPort: m.amqpPort,
    clusterPort: m.clusterPort,
    url: m.url,
    httpUrl: m.httpUrl,
    wsUrl: m.wsUrl,
    restarts: m.restarts,
  })}\n`;
}

/**
 * `quorate-broker cluster --nodes 3 --base-port 5672 --data-dir D`: runs a supervised local
 * cluster (members dial each other directly, no proxies) with auto-restart, until SIGTERM/SIGINT.
 * stdout carries JSON lines: `{"event":"member-ready",id,pid,amqpPort,clusterPort,url,httpUrl,wsUrl,restarts}`
 * for every member start (restarts included), `{"event":"cluster-ready",nodes,dataDir,members}`
 * once all are up, `member-exit` / `member-restart` lines, and `{"event":"cluster-stopped"}`.
 * Resolves with the exit code: 0 after a clean stop, 1 if the cluster could not start, 2 on bad flags.
 */
export async function runClusterCommand(argv: readonly string[], io: ClusterCommandIo): Promise<number> {
  const args = flagsOrExit('quorate-broker cluster', argv, parseClusterArgs, CLUSTER_USAGE, io);
  if (typeof args === 'number') return args;

  const logger = io.logger ?? createCliLogger(args.logLevel ?? DEFAULT_LOG_LEVEL, io.stderr);
  if (args.basePort > 0) {
    // Fail fast and say which: a taken port would only show up as a member crash-looping.
    const amqp = Array.from({ length: args.nodes }, (_, i) => args.basePort + i);
    const cluster = amqp.map((p) => p + CLUSTER_PORT_OFFSET);
    const ws = args.wsBasePort ? Array.from({ length: args.nodes }, (_, i) => args.wsBasePort! + i) : [];
    const taken = await portsInUse([...amqp, ...cluster, ...ws]);
    if (taken.length > 0) {
      io.stderr.write(
        `cluster did not start: port${taken.length > 1 ? 's' : ''} ${taken.join(', ')} on 127.0.0.1 already in use ` +
          `(AMQP ports ${amqp[0]}..${amqp.at(-1)}, cluster ports ${cluster[0]}..${cluster.at(-1)}` +
          `${ws.length > 0 ? `, WebSocket ports ${ws[0]}..${ws.at(-1)}` : ''}): ` +
          'pick another --base-port, or --base-port 0 for free ports\n',
      );
      return 1;
    }
  }
  const plan = await planCluster({
    nodes: args.nodes,
    basePort: args.basePort,
    ...(args.httpBasePort !== undefined ? { httpBasePort: args.httpBasePort } : {}),
    ...(args.wsBasePort !== undefined ? { wsBasePort: args.wsBasePort } : {}),
    dataDir: args.dataDir,
  });
  const peersArg = formatPeers(
    plan.ids.map((id, i) => ({ id, host: '127.0.0.1', port: plan.clusterPorts[i]! })),
  );
  const peers = plan.ids.map((id, i) => ({ id, host: '127.0.0.1', port: plan.clusterPorts[i]! }));
  const clusterSecretFile = args.clusterSecretFile ?? (await ensureClusterSecret(plan.dataDir));
  const clusterTls = args.clusterTls;
  const memberCommand = io.memberCommand ?? selfMemberCommand;
  const supervisor = new Supervisor({
    members: plan.ids.map((id, index) => ({
      id,
      amqpPort: plan.amqpPorts[index]!,
      clusterPort: plan.clusterPorts[index]!,
      ...(plan.httpPorts ? { httpPort: plan.httpPorts[index]! } : {}),
      command: () =>
        memberCommand({
          id,
          index,
          amqpPort: plan.amqpPorts[index]!,
          clusterPort: plan.clusterPorts[index]!,
          ...(plan.httpPorts ? { httpPort: plan.httpPorts[index]! } : {}),
          ...(plan.wsPorts ? { wsPort: plan.wsPorts[index]! } : {}),
          peers,
          peersArg,
          dataDir: join(plan.dataDir, id),
          clusterSecretFile,
          ...(clusterTls ? { clusterTls } : {}),
          extraArgs: [...args.memberArgs, ...(args.dedup ? ['--dedup'] : [])],
          ...(args.logLevel !== undefined ? { logLevel: args.logLevel } : {}),
        }),
    })),
    autoRestart: true,
    restartPolicy: {
      ...io.restartPolicy,
      ...(args.maxFailures !== undefined ? { maxFailures: args.maxFailures } : {}),
      ...(args.failureWindowS !== undefined ? { failureWindowMs: args.failureWindowS * 1000 } : {}),
    },
    logger,
    // Members' own logs stay visible to whoever runs the cluster, tagged with the member id.
    onMemberOutput: (id, _stream, line) => io.stderr.write(`[${id}] ${line}\n`),
  });
  supervisor.on('member-ready', (m) => io.stdout.write(memberLine('member-ready', m)));
  supervisor.on('member-exit', (e) => io.stdout.write(`${JSON.stringify({ event: 'member-exit', ...e })}\n`));
  supervisor.on('member-restart', (r) =>
    io.stdout.write(`${JSON.stringify({ event: 'member-restart', ...r })}\n`),
  );
  supervisor.on('member-failed', (f) => {
    io.stdout.write(`${JSON.stringify({ event: 'member-failed', ...f })}\n`);
    io.stderr.write(`member ${f.id} is down for good: ${f.reason}\n`);
  });

  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  const signals = io.signals ?? process;
  signals.on('SIGTERM', requestStop);
  signals.on('SIGINT', requestStop);
  const onAbort = (): void => requestStop();
  io.abort?.addEventListener('abort', onAbort);
  if (io.abort?.aborted) requestStop();

  let code = 0;
  // the members bind their ports now
  await plan.releasePorts();
  try {
    const started = supervisor.start().then(
      () => true,
      (err: unknown) => err,
    );
    const outcome = await Promise.race([started, stopRequested.then(() => 'stop' as const)]);
    if (outcome === true) {
      io.stdout.write(
        `${JSON.stringify({
          event: 'cluster-ready',
          nodes: args.nodes,
          dataDir: plan.dataDir,
          members: supervisor.members().map(({ id, pid, amqpPort, clusterPort, url, httpUrl, wsUrl }) => ({
            id,
            pid,
            amqpPort,
            clusterPort,
            url,
            httpUrl,
            wsUrl,
          })),
        })}\n`,
      );
      await stopRequested;
    } else if (outcome !== 'stop') {
      const message = explainSystemError(outcome);
      io.stderr.write(`cluster did not start: ${message}\n`);
      code = 1;
    }
  } finally {
    signals.off('SIGTERM', requestStop);
    signals.off('SIGINT', requestStop);
    io.abort?.removeEventListener('abort', onAbort);
    await supervisor.stop();
    if (plan.createdDataDir) await rm(plan.dataDir, { recursive: true, force: true });
    io.stdout.write(`${JSON.stringify({ event: 'cluster-stopped' })}\n`);
  }
  return code;
}
