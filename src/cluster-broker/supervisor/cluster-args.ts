import { parseArgs } from 'node:util';
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
  /** --help */
  help: boolean;
}

export const CLUSTER_USAGE = `Usage: quorate-broker cluster [--nodes 3] [--base-port 5672] [--data-dir DIR] [--cluster-secret-file FILE]

Runs a supervised local cluster: one process per member (n1..nN), AMQP ports base..base+N-1,
cluster ports base+1000..; a member that dies is restarted with backoff. Prints one JSON line per
member start and a summary; SIGTERM or SIGINT stops every member (paused ones are resumed first).
  --nodes N        number of members (default 3)
  --base-port P    first AMQP port (default 5672); 0 = free ports
  --data-dir DIR   parent of the members' stores (default: a temp dir, removed on stop)
  --cluster-secret-file FILE   the secret members prove to each other (default: DIR/cluster-secret,
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
    help: values.help ?? false,
  };
}
