import { parseArgs } from 'node:util';
import { type LogLevel, parseLogLevel } from '../cli/cli-logger.js';
import { SupervisorError } from './errors.js';

/** Flags of `quorate-broker cluster`. */
export interface ClusterCommandArgs {
  /** --nodes, default 3. */
  nodes: number;
  /** --base-port, default 5672 (cluster ports from base+1000); 0 picks free ports. */
  basePort: number;
  /** --data-dir; default a temp dir, removed on stop. */
  dataDir: string | undefined;
  /** --cluster-secret-file; default `<data dir>/cluster-secret`, created if absent. */
  clusterSecretFile: string | undefined;
  /** --cluster-tls-cert/-key/-ca (all three or none). */
  clusterTls: { cert: string; key: string; ca: string } | undefined;
  /** --max-failures: give up on a member after this many failures within the window (default 5). */
  maxFailures: number | undefined;
  /** --failure-window, in seconds (default 60). */
  failureWindowS: number | undefined;
  /** --log-level: what the cluster and its members write to stderr (undefined: their default, warn). */
  logLevel: LogLevel | undefined;
  /** --help */
  help: boolean;
}

export const CLUSTER_USAGE = `Usage: quorate-broker cluster [--nodes 3] [--base-port 5672] [--data-dir DIR] [--cluster-secret-file FILE]

Runs a supervised local cluster: one process per member (n1..nN), AMQP ports base..base+N-1,
cluster ports base+1000..; a member that dies is restarted with backoff (100 ms doubling to 5 s).
A member that fails 5 times within 60 s, or refuses its configuration (exit code 2), is not
restarted again. Prints one JSON line per member start and a summary; SIGTERM or SIGINT stops
every member (paused ones are resumed first). Exits 1 when the cluster cannot come up (a port
already taken, a member that keeps failing), 2 on bad flags.
  --nodes N             number of members (default 3)
  --base-port P         first AMQP port (default 5672); 0 = free ports
  --data-dir DIR        parent of the members' stores (default: a temp dir, removed on stop)
  --max-failures K      give up on a member after K failures within the window (default 5);
                        a failure is an exit other than by SIGKILL/SIGTERM/SIGINT, or no ready
                        line within 60 s
  --failure-window S    that window in seconds (default 60)
  --log-level L         debug|info|warn|error: what the cluster and its members write to
                        stderr (default warn)
  --cluster-secret-file FILE
                        the secret members prove to each other (default: DIR/cluster-secret,
                        32 random bytes created with mode 0600 if absent)
  --cluster-tls-cert FILE, --cluster-tls-key FILE, --cluster-tls-ca FILE
                        mutual TLS between members (one certificate for every member)
`;

function integerFlag(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new SupervisorError(
      'amqp:invalid-field',
      `--${name} must be an integer in ${min}..${max}, got '${raw}'`,
    );
  }
  return value;
}

function optionalInteger(
  name: string,
  raw: string | undefined,
  min: number,
  max: number,
): number | undefined {
  return raw === undefined ? undefined : integerFlag(name, raw, min, min, max);
}

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
  let values: {
    nodes?: string;
    'base-port'?: string;
    'data-dir'?: string;
    'cluster-secret-file'?: string;
    'cluster-tls-cert'?: string;
    'cluster-tls-key'?: string;
    'cluster-tls-ca'?: string;
    'log-level'?: string;
    'max-failures'?: string;
    'failure-window'?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        nodes: { type: 'string' },
        'base-port': { type: 'string' },
        'data-dir': { type: 'string' },
        'cluster-secret-file': { type: 'string' },
        'cluster-tls-cert': { type: 'string' },
        'cluster-tls-key': { type: 'string' },
        'cluster-tls-ca': { type: 'string' },
        'log-level': { type: 'string' },
        'max-failures': { type: 'string' },
        'failure-window': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
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
    nodes: integerFlag('nodes', values.nodes, 3, 1, 99),
    basePort: integerFlag('base-port', values['base-port'], 5672, 0, 64_000),
    dataDir: values['data-dir'],
    maxFailures: optionalInteger('max-failures', values['max-failures'], 1, 1_000),
    failureWindowS: optionalInteger('failure-window', values['failure-window'], 1, 86_400),
    logLevel: parseLogLevelFlag(values['log-level']),
    help: values.help ?? false,
  };
}
