import { parseArgs } from 'node:util';
import { parseSingleNodeArgs } from '../cli/single-node-args.js';
import { SupervisorError } from './errors.js';

/** Flags of `quorate-broker cluster`. */
export interface ClusterCommandArgs {
  /** --nodes, default 3. */
  nodes: number;
  /** --base-port, default 5672 (cluster ports from base+1000); 0 picks free ports. */
  basePort: number;
  /** --data-dir; default a temp dir, removed on stop. */
  dataDir: string | undefined;
  /** --help */
  help: boolean;
  /** Server flags passed to every member as given (--users, --permissions, limits...). */
  memberArgs: string[];
}

/** Flags of `cluster` itself; every other flag is a server flag for the members. */
const OWN_FLAGS = ['nodes', 'base-port', 'data-dir'];
/** Server flags the cluster sets per member itself. */
const PER_MEMBER_FLAGS = ['port', 'host', 'data-dir', 'container-id'];

export const CLUSTER_USAGE = `Usage: quorate-broker cluster [--nodes 3] [--base-port 5672] [--data-dir DIR]

Runs a supervised local cluster: one process per member (n1..nN), AMQP ports base..base+N-1,
cluster ports base+1000..; a member that dies is restarted with backoff. Prints one JSON line per
member start and a summary; SIGTERM or SIGINT stops every member (paused ones are resumed first).
  --nodes N        number of members (default 3)
  --base-port P    first AMQP port (default 5672); 0 = free ports
  --data-dir DIR   parent of the members' stores (default: a temp dir, removed on stop)
  plus the single-node server flags, passed to every member (--users, --permissions,
  --no-anonymous, --max-memory, --max-connections-per-address, ...; see quorate-broker --help),
  except --port, --host, --data-dir and --container-id.
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
  const own: string[] = [];
  const memberArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? a.slice(2, eq < 0 ? undefined : eq) : '';
    const takesValue = eq < 0 && i + 1 < argv.length && !argv[i + 1]!.startsWith('-');
    if (a === '-h' || a === '--help' || OWN_FLAGS.includes(name)) {
      own.push(a);
      if (OWN_FLAGS.includes(name) && eq < 0 && i + 1 < argv.length) own.push(argv[++i]!);
    } else if (PER_MEMBER_FLAGS.includes(name)) {
      throw new SupervisorError('amqp:invalid-field', `--${name} is set per member by the cluster`);
    } else {
      memberArgs.push(a);
      if (takesValue) memberArgs.push(argv[++i]!);
    }
  }
  try {
    parseSingleNodeArgs(memberArgs);
  } catch (err) {
    throw new SupervisorError('amqp:invalid-field', (err as Error).message, { cause: err });
  }
  let values: { nodes?: string; 'base-port'?: string; 'data-dir'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: own,
      options: {
        nodes: { type: 'string' },
        'base-port': { type: 'string' },
        'data-dir': { type: 'string' },
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
    help: values.help ?? false,
    memberArgs,
  };
}
