import { SupervisorError } from '../supervisor/errors.js';
import { type LogLevel, parseLogLevel } from './cli-logger.js';
import { flagTable, type InvalidFlag, integerFlag, parseFlags } from './flags.js';
import { parseSingleNodeArgs } from './single-node-args.js';

/** Flags of `quorate-broker cluster`. */
export interface ClusterCommandArgs {
  /** --nodes, default 3. */
  nodes: number;
  /** --base-port, default 5672 (cluster ports from base+1000); 0 picks free ports. */
  basePort: number;
  /** --http-base-port: member i serves HTTP on H+i-1; 0 = free ports; absent: no HTTP. */
  httpBasePort: number | undefined;
  /** --ws-base-port: member i serves AMQP over WebSocket on W+i-1; 0 = free ports; absent: none. */
  wsBasePort: number | undefined;
  /** --data-dir; default a temp dir, removed on stop. */
  dataDir: string | undefined;
  /** --cluster-secret-file; default `<data dir>/cluster-secret`, created if absent. */
  clusterSecretFile: string | undefined;
  /** --cluster-tls-cert/-key/-ca (all three or none). */
  clusterTls: { cert: string; key: string; ca: string } | undefined;
  /** --dedup: members deduplicate on every queue for every sender. */
  dedup: boolean;
  /** --max-failures: give up on a member after this many failures within the window (default 5). */
  maxFailures: number | undefined;
  /** --failure-window, in seconds (default 60). */
  failureWindowS: number | undefined;
  /** --log-level: what the cluster and its members write to stderr (undefined: their default, warn). */
  logLevel: LogLevel | undefined;
  /** --help */
  help: boolean;
  /** Server flags passed to every member as given (--users, --permissions, limits...). */
  memberArgs: string[];
}

/** Flags of `cluster` itself that take a value; every other flag is a server flag for the members. */
const OWN_VALUED = [
  'nodes',
  'base-port',
  'http-base-port',
  'ws-base-port',
  'data-dir',
  'log-level',
  'max-failures',
  'failure-window',
  'cluster-secret-file',
  'cluster-tls-cert',
  'cluster-tls-key',
  'cluster-tls-ca',
] as const;
/** Own flags that take no value. */
const OWN_SWITCHES = ['dedup'] as const;
const OWN_FLAGS: readonly string[] = [...OWN_VALUED, ...OWN_SWITCHES];
/** Server flags the cluster sets per member itself. */
const PER_MEMBER_FLAGS = ['port', 'host', 'data-dir', 'container-id', 'ws-port'];

export const CLUSTER_USAGE = `Usage: quorate-broker cluster [--nodes 3] [--base-port 5672] [--http-base-port 15672] [--data-dir DIR] [--cluster-secret-file FILE] [...]

Runs a supervised local cluster: one process per member (n1..nN), AMQP ports base..base+N-1,
cluster ports base+1000..; a member that dies is restarted with backoff (100 ms doubling to 5 s).
A member that fails 5 times within 60 s, or refuses its configuration (exit code 2), is not
restarted again. Prints one JSON line per member start and a summary; SIGTERM or SIGINT stops
every member (paused ones are resumed first). Exits 1 when the cluster cannot come up (a port
already taken, a member that keeps failing), 2 on bad flags.
  --nodes N             number of members (default 3)
  --base-port P         first AMQP port (default 5672); 0 = free ports
  --http-base-port H    member i serves its status page, JSON API, /metrics, /healthz and
                        /readyz on H+i-1 (n1 on H); 0 = free ports; default: no HTTP
  --ws-base-port W      member i serves AMQP over WebSocket on W+i-1 (n1 on W; wss:// with
                        --tls-cert); 0 = free ports; default: none. Browser origins:
                        --ws-allow-origin (docs/websocket.md)
  --data-dir DIR        parent of the members' stores (default: a temp dir, removed on stop)
  --dedup               members deduplicate by message-id on every queue, for every sender
  --max-failures K      give up on a member after K failures within the window (default 5);
                        a failure is an exit other than by SIGKILL/SIGTERM/SIGINT, or no ready
                        line within 60 s
  --failure-window S    that window in seconds (default 60)
  --log-level L         trace|debug|info|warn|error: what the cluster and its members write to
                        stderr (default warn)
  --cluster-secret-file FILE
                        the secret members prove to each other (default: DIR/cluster-secret,
                        32 random bytes created with mode 0600 if absent)
  --cluster-tls-cert FILE, --cluster-tls-key FILE, --cluster-tls-ca FILE
                        mutual TLS between members (one certificate for every member)
  --cluster-id NAME, --federation FILE
                        passed to every member: the cluster's id (give each federated cluster
                        its own) and the queues to federate into it; one member at a time runs
                        the links (docs/federation.md)
  plus the single-node server flags, passed to every member (--users, --permissions,
  --no-anonymous, --max-memory, --max-connections-per-address, ...; see quorate-broker --help),
  except --port, --host, --data-dir, --container-id and --ws-port.
`;

/** A bad flag of `cluster`: SupervisorError('amqp:invalid-field'). */
const invalid: InvalidFlag = (message, cause) =>
  new SupervisorError('amqp:invalid-field', message, cause === undefined ? {} : { cause });

function parseLogLevelFlag(raw: string | undefined): LogLevel | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseLogLevel(raw);
  } catch (err) {
    throw new SupervisorError('amqp:invalid-field', (err as Error).message);
  }
}

/** Parses the flags after `cluster`; throws `SupervisorError` ('amqp:invalid-field') on bad input. */
export function parseClusterArgs(argv: readonly string[]): ClusterCommandArgs {
  const own: string[] = [];
  const memberArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? a.slice(2, eq < 0 ? undefined : eq) : '';
    const takesValue = eq < 0 && i + 1 < argv.length && !argv[i + 1]!.startsWith('-');
    if (a === '-h' || a === '--help' || OWN_FLAGS.includes(name)) {
      own.push(a);
      if ((OWN_VALUED as readonly string[]).includes(name) && eq < 0 && i + 1 < argv.length)
        own.push(argv[++i]!);
    } else if (PER_MEMBER_FLAGS.includes(name)) {
      throw new SupervisorError('amqp:invalid-field', `--${name} is set per member by the cluster`);
    } else {
      memberArgs.push(a);
      if (takesValue) memberArgs.push(argv[++i]!);
    }
  }
  const values = parseFlags(own, flagTable(OWN_VALUED, OWN_SWITCHES), invalid);
  const wsBasePort = integerFlag('ws-base-port', values['ws-base-port'], 0, 65_000, invalid);
  // a member's own check would name --ws-port, which the cluster sets itself
  if (wsBasePort === undefined && memberArgs.some((a) => /^--ws-allow-origin(=|$)/.test(a))) {
    throw new SupervisorError('amqp:invalid-field', '--ws-allow-origin needs --ws-base-port');
  }
  try {
    // as a member will see them (the cluster adds --ws-port per member)
    parseSingleNodeArgs([...memberArgs, ...(wsBasePort !== undefined ? ['--ws-port', '0'] : [])]);
  } catch (err) {
    throw new SupervisorError('amqp:invalid-field', (err as Error).message, { cause: err });
  }
  const cert = values['cluster-tls-cert'];
  const key = values['cluster-tls-key'];
  const ca = values['cluster-tls-ca'];
  const tlsCount = [cert, key, ca].filter((f) => f !== undefined).length;
  if (tlsCount !== 0 && tlsCount !== 3) {
    throw new SupervisorError(
      'amqp:invalid-field',
      '--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go together',
    );
  }
  return {
    clusterSecretFile: values['cluster-secret-file'],
    clusterTls: cert !== undefined && key !== undefined && ca !== undefined ? { cert, key, ca } : undefined,
    nodes: integerFlag('nodes', values.nodes, 1, 99, invalid) ?? 3,
    basePort: integerFlag('base-port', values['base-port'], 0, 64_000, invalid) ?? 5672,
    httpBasePort: integerFlag('http-base-port', values['http-base-port'], 0, 65_000, invalid),
    wsBasePort,
    dataDir: values['data-dir'],
    dedup: values.dedup ?? false,
    maxFailures: integerFlag('max-failures', values['max-failures'], 1, 1_000, invalid),
    failureWindowS: integerFlag('failure-window', values['failure-window'], 1, 86_400, invalid),
    logLevel: parseLogLevelFlag(values['log-level']),
    help: values.help ?? false,
    memberArgs,
  };
}
