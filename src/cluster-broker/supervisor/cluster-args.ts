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
  /** --dedup: members deduplicate on every queue for every sender. */
  dedup: boolean;
  /** --help */
  help: boolean;
}

export const CLUSTER_USAGE = `Usage: quorate-broker cluster [--nodes 3] [--base-port 5672] [--data-dir DIR]

Runs a supervised local cluster: one process per member (n1..nN), AMQP ports base..base+N-1,
cluster ports base+1000..; a member that dies is restarted with backoff. Prints one JSON line per
member start and a summary; SIGTERM or SIGINT stops every member (paused ones are resumed first).
  --nodes N        number of members (default 3)
  --base-port P    first AMQP port (default 5672); 0 = free ports
  --data-dir DIR   parent of the members' stores (default: a temp dir, removed on stop)
  --dedup          members deduplicate by message-id on every queue, for every sender
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
  let values: { nodes?: string; 'base-port'?: string; 'data-dir'?: string; dedup?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        nodes: { type: 'string' },
        'base-port': { type: 'string' },
        'data-dir': { type: 'string' },
        dedup: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new SupervisorError('amqp:invalid-field', (err as Error).message, { cause: err });
  }
  return {
    nodes: integerFlag('nodes', values.nodes, 3, 1, 99),
    basePort: integerFlag('base-port', values['base-port'], 5672, 0, 64_000),
    dataDir: values['data-dir'],
    dedup: values.dedup ?? false,
    help: values.help ?? false,
  };
}
