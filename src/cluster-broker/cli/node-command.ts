/**
 * `quorate-broker node --id n1 --port 5672 --cluster-port 6672
 *    --peers n1=127.0.0.1:6672,n2=127.0.0.1:6673,n3=127.0.0.1:6674 --data-dir D
 *    --cluster-secret-file F [server flags]`
 *
 * Runs one cluster member until SIGTERM/SIGINT, until its supervisor goes away (stdin, when it is
 * a pipe, reaches EOF; or the parent process changes), or until its storage fails (exit 3).
 * Prints one JSON line once it listens, quorate or not:
 *   {"ready":true,"id":"n1","amqpPort":5672,"clusterPort":6672,"pid":1234}
 */
import { fstatSync } from 'node:fs';
import { sharedInterval } from '../../common/shared-interval.js';
import type { MemberHandle } from '../api.js';
import { startMember } from '../assembly/member.js';
import { MemberConfigError } from '../cluster/errors.js';
import { checkOwnEntry, parsePeerList } from '../cluster/peer-list.js';
import { isLoopbackHost, loadClusterSecret } from '../replication/cluster-secret.js';
import { type ClusterTlsOptions, loadClusterTls } from '../replication/cluster-tls.js';
import type { PeerAddress } from '../replication/tcp-transport.js';
import { createCliLogger } from './cli-logger.js';
import { flagTable, integerFlag, parseFlags, reportUsageProblem } from './flags.js';
import type { CliIo } from './io.js';
import { parseSingleNodeArgs } from './single-node-args.js';
import { brokerOptionsFromArgs } from './single-node-command.js';
import { explainSystemError } from './system-errors.js';

export const NODE_USAGE = `Usage: quorate-broker node --id ID --port P --cluster-port C --peers ID=HOST:PORT,... --data-dir DIR [options]

Runs one member of a quorate cluster (static membership from --peers, which names every
member's CLUSTER address, this one included). Prints one JSON line once it listens:
  {"ready":true,"id":ID,"amqpPort":P,"clusterPort":C,"pid":PID}   (plus "httpPort":H with --http-port,
  "wsPort":W with --ws-port, and "wsTls":true when that is wss://)
whether or not it is quorate yet. Exits on SIGTERM/SIGINT and when the process that started it
goes away (stdin pipe closed, or parent changed).

  --id ID                  this member's id (a name in --peers)
  --port P                 AMQP client port (0 = a free port, named in the ready line)
  --cluster-port C         member-to-member port (default: this member's --peers entry)
  --cluster-host H         address the cluster port binds (default: this member's --peers host)
  --cluster-secret-file F  the cluster secret (a file readable by its owner only, at least 16
                           bytes): every member-to-member connection proves it both ways.
                           Required: without it anyone who reaches the cluster port (on
                           loopback: any local user or process) could join the cluster, replace
                           its state and read its messages. \`quorate-broker cluster\` makes one
  --insecure-no-secret     start without a cluster secret anyway (a warning on every start);
                           only when every cluster address (--cluster-host and --peers) is a
                           loopback address
  --cluster-tls-cert FILE  PEM certificate of this member: mutual TLS on the cluster port
  --cluster-tls-key FILE   its PEM private key
  --cluster-tls-ca FILE    PEM CA that signs every member's certificate (peers are verified
                           against it; host names are not checked)
  --peers LIST             id=host:port,... for every member, this one included
  --data-dir DIR           this member's store (Raft log, snapshots); required
  --cluster-id NAME        refuse members of another cluster (default quorate); also the id
                           in our Open and in federation routes: give each federated cluster
                           its own
  --federation FILE        JSON: queues to move here from upstream brokers on demand; one
                           member at a time runs the links (docs/federation.md)
  --advertise-host H       host clients are told to dial (default --host)
  --snapshot-every N       compact the log every N entries (default 10000)
  --update-peers           record --peers' addresses over the ones this data dir recorded on
                           first start (same member ids only: a member moved on purpose)
  --log-level L            trace|debug|info|warn|error: what goes to stderr (default warn;
                           trace adds every AMQP frame in and out)

Refused with exit code 2 (nothing started): a member id or address twice in --peers, this
member missing from it, a --cluster-port other than its own --peers entry's port, and a --peers
or --cluster-id other than the ones its data dir recorded on first start (<data dir>/cluster.json),
no --cluster-secret-file (unless --insecure-no-secret with loopback cluster addresses only), and a
secret file other users may read or shorter than 16 bytes.
An even number of members starts with a warning (it tolerates no more failures than one less).
  plus every single-node server flag (--host, --users, --max-connections, --http-port,
  --http-host, ...; see --help of quorate-broker itself).
`;

interface NodeArgs {
  id: string;
  peers: string;
  clusterPort: number | undefined;
  clusterHost: string | undefined;
  clusterSecretFile: string | undefined;
  /** --insecure-no-secret: start without a secret (loopback cluster addresses only). */
  insecureNoSecret: boolean;
  clusterTls: { cert: string; key: string; ca: string } | undefined;
  clusterId: string | undefined;
  advertiseHost: string | undefined;
  snapshotEvery: number | undefined;
  updatePeers: boolean;
  rest: string[];
  help: boolean;
}

const NODE_FLAGS = [
  'id',
  'peers',
  'cluster-port',
  'cluster-host',
  'cluster-id',
  'cluster-secret-file',
  'cluster-tls-cert',
  'cluster-tls-key',
  'cluster-tls-ca',
  'advertise-host',
  'snapshot-every',
] as const;
const NODE_SWITCHES = ['update-peers', 'insecure-no-secret'] as const;

export function parseNodeArgs(argv: readonly string[]): NodeArgs {
  const mine: string[] = [];
  const rest: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? a.slice(2, eq < 0 ? undefined : eq) : '';
    if (a === '-h' || a === '--help') help = true;
    else if ((NODE_SWITCHES as readonly string[]).includes(name)) mine.push(a);
    else if ((NODE_FLAGS as readonly string[]).includes(name)) {
      mine.push(a);
      if (eq < 0 && i + 1 < argv.length) mine.push(argv[++i]!);
    } else rest.push(a);
  }
  const v = parseFlags(
    mine,
    flagTable(NODE_FLAGS, NODE_SWITCHES),
    (message, cause) => new MemberConfigError(message, { cause }),
  );
  // bounded: an index-like count past 2^53 would stop meaning what it says
  const int = (name: 'cluster-port' | 'snapshot-every', min: number, max: number): number | undefined =>
    integerFlag(name, v[name], min, max, (message) => new MemberConfigError(message));
  if (help)
    return {
      id: '',
      peers: '',
      clusterPort: undefined,
      clusterHost: undefined,
      clusterSecretFile: undefined,
      insecureNoSecret: false,
      clusterTls: undefined,
      clusterId: undefined,
      advertiseHost: undefined,
      snapshotEvery: undefined,
      updatePeers: false,
      rest,
      help,
    };
  if (!v.id) throw new MemberConfigError('--id is required');
  if (!v.peers) throw new MemberConfigError('--peers is required');
  const tlsFiles = [v['cluster-tls-cert'], v['cluster-tls-key'], v['cluster-tls-ca']];
  const tlsCount = tlsFiles.filter((f) => f !== undefined).length;
  if (tlsCount !== 0 && tlsCount !== 3) {
    throw new MemberConfigError('--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go together');
  }
  return {
    id: v.id,
    peers: v.peers,
    clusterPort: int('cluster-port', 1, 65535),
    clusterHost: v['cluster-host'],
    clusterSecretFile: v['cluster-secret-file'],
    insecureNoSecret: v['insecure-no-secret'] === true,
    clusterTls: tlsCount === 3 ? { cert: tlsFiles[0]!, key: tlsFiles[1]!, ca: tlsFiles[2]! } : undefined,
    clusterId: v['cluster-id'],
    advertiseHost: v['advertise-host'],
    snapshotEvery: int('snapshot-every', 1, Number.MAX_SAFE_INTEGER),
    updatePeers: v['update-peers'] === true,
    rest,
    help,
  };
}

/**
 * Throws unless starting without a secret was asked for (--insecure-no-secret) and every cluster
 * address is a loopback one: a reachable port without a secret is never allowed.
 */
function checkNoSecretAllowed(args: NodeArgs, peers: Record<string, PeerAddress>): void {
  const howTo =
    'Create a secret (e.g. openssl rand -hex 32 > FILE; chmod 600 FILE) and give every member the same FILE, or start the members with `quorate-broker cluster`, which makes one';
  const bindHost = args.clusterHost ?? peers[args.id]?.host;
  const exposed = [bindHost, ...Object.values(peers).map((p) => p.host)].find(
    (h): h is string => h !== undefined && !isLoopbackHost(h),
  );
  if (exposed !== undefined) {
    throw new MemberConfigError(
      `refusing to start without --cluster-secret-file: the cluster address ${exposed} is not a loopback address, so anyone who reaches it could join the cluster. ${howTo}`,
    );
  }
  if (!args.insecureNoSecret) {
    throw new MemberConfigError(
      `refusing to start without --cluster-secret-file: any local user or process that reaches the cluster port could join the cluster, replace its state and read its messages. ${howTo}. For a throwaway loopback-only cluster, --insecure-no-secret starts it without one`,
    );
  }
}

/** Resolves when the process that started us is gone (stdin pipe EOF, or reparented). */
function supervisorGone(): { promise: Promise<string>; dispose(): void } {
  let resolve!: (why: string) => void;
  const promise = new Promise<string>((r) => {
    resolve = r;
  });
  let stdinWatched = false;
  try {
    const st = fstatSync(0);
    stdinWatched = st.isFIFO() || st.isSocket();
  } catch {
    stdinWatched = false;
  }
  const onEnd = (): void => resolve('stdin closed');
  if (stdinWatched) {
    process.stdin.on('end', onEnd);
    process.stdin.on('close', onEnd);
    process.stdin.on('error', onEnd);
    process.stdin.resume();
  }
  const parent = process.ppid;
  // on the process's shared 500 ms timer, which a member's heartbeats run (common/shared-interval.ts)
  const stopPoll = sharedInterval(
    500,
    () => {
      if (parent !== 1 && process.ppid !== parent) resolve('parent process gone');
    },
    { ref: false },
  );
  return {
    promise,
    dispose() {
      stopPoll();
      if (stdinWatched) {
        process.stdin.off('end', onEnd);
        process.stdin.off('close', onEnd);
        process.stdin.off('error', onEnd);
        process.stdin.pause();
        process.stdin.unref?.();
      }
    },
  };
}

export async function runNodeCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let args: NodeArgs;
  let serverArgs: ReturnType<typeof parseSingleNodeArgs>;
  let peers: Record<string, PeerAddress>;
  try {
    args = parseNodeArgs(argv);
    serverArgs = parseSingleNodeArgs(args.rest);
    if (args.help) {
      io.stdout.write(NODE_USAGE);
      return 0;
    }
    if (serverArgs.dataDir === undefined) throw new MemberConfigError('--data-dir is required');
    if (serverArgs.repair) {
      throw new MemberConfigError(
        '--repair is for the single-node store; a member recovers from the other members',
      );
    }
    peers = parsePeerList(args.peers);
    checkOwnEntry(args.id, peers, args.clusterPort);
  } catch (err) {
    return reportUsageProblem('quorate-broker node', err, io.stderr);
  }
  const dataDir = serverArgs.dataDir;
  // Every cluster port needs a secret: on loopback too, any local process could otherwise join
  // (docs/security.md#cluster-secret). An unreadable secret or TLS file is refused before
  // anything starts (exit 2, like bad flags).
  let clusterSecret: Uint8Array | undefined;
  let clusterTls: ClusterTlsOptions | undefined;
  try {
    if (args.clusterSecretFile !== undefined) clusterSecret = await loadClusterSecret(args.clusterSecretFile);
    else checkNoSecretAllowed(args, peers);
    if (args.clusterTls) clusterTls = await loadClusterTls(args.clusterTls);
  } catch (err) {
    io.stderr.write(`${explainSystemError(err)}\n`);
    return 2;
  }
  let member: MemberHandle;
  let fatal: ((err: Error) => void) | undefined;
  const logger = createCliLogger(serverArgs.logLevel, io.stderr);
  if (clusterSecret === undefined) {
    logger.warn(
      { id: args.id },
      'running WITHOUT a cluster secret (--insecure-no-secret): any process that reaches the cluster port can join the cluster, replace its state and read its messages',
    );
  }
  try {
    const base = await brokerOptionsFromArgs(serverArgs);
    const { dataDir: _d, ...server } = base;
    member = await startMember({
      ...server,
      logger,
      id: args.id,
      peers,
      dataDir,
      ...(args.clusterPort !== undefined ? { clusterPort: args.clusterPort } : {}),
      ...(args.clusterHost !== undefined ? { clusterHost: args.clusterHost } : {}),
      ...(clusterSecret ? { clusterSecret } : {}),
      ...(clusterTls ? { clusterTls } : {}),
      ...(args.clusterId !== undefined ? { clusterId: args.clusterId } : {}),
      ...(args.advertiseHost !== undefined ? { advertiseHost: args.advertiseHost } : {}),
      ...(args.snapshotEvery !== undefined ? { snapshotEvery: args.snapshotEvery } : {}),
      updatePeers: args.updatePeers,
      onFatal: (err) => fatal?.(err),
    });
  } catch (err) {
    io.stderr.write(`cannot start the member: ${explainSystemError(err)}\n`);
    // a configuration that cannot be right: restarting it would fail the same way
    return err instanceof MemberConfigError ? 2 : 1;
  }
  const signals = io.signals ?? process;
  const gone = supervisorGone();
  let code = 0;
  const stopRequested = new Promise<string>((resolve) => {
    const onSignal = (): void => resolve('signal');
    signals.on('SIGTERM', onSignal);
    signals.on('SIGINT', onSignal);
    fatal = (err) => {
      io.stderr.write(`storage failed, stopping: ${err.message}\n`);
      code = 3;
      resolve('storage failed');
    };
    void gone.promise.then(resolve);
  });
  const ready: Record<string, unknown> = {
    ready: true,
    id: member.id,
    amqpPort: member.amqpPort,
    clusterPort: member.clusterPort,
    pid: process.pid,
  };
  if (member.httpUrl !== undefined) ready.httpPort = Number(new URL(member.httpUrl).port);
  if (member.wsUrl !== undefined) {
    ready.wsPort = Number(new URL(member.wsUrl).port);
    if (member.wsUrl.startsWith('wss:')) ready.wsTls = true;
  }
  io.stdout.write(`${JSON.stringify(ready)}\n`);
  await stopRequested;
  gone.dispose();
  try {
    await member.stop();
  } catch (err) {
    io.stderr.write(`error while stopping: ${(err as Error).message}\n`);
    return 1;
  }
  return code;
}
