/** Flags of the single-node `quorate-broker` (no subcommand). */
import { parseArgs } from 'node:util';
import { AmqpError } from '../../errors.js';
import { type LogLevel, parseLogLevel } from './cli-logger.js';

export const SINGLE_NODE_USAGE = `Usage: quorate-broker [--port 5672] [--host 127.0.0.1] --data-dir DIR [options]
       quorate-broker cluster --help      (a supervised local cluster)
       quorate-broker node --help         (one member of a cluster)

Runs a single-node AMQP 1.0 broker. Prints one JSON line once it listens:
  {"ready":true,"amqpPort":PORT,"pid":PID}
and stops cleanly on SIGTERM/SIGINT (connections closed, store flushed).

  --port P                 AMQP port (default 5672; 0 = a free port, named in the ready line)
  --host H                 address to bind (default 127.0.0.1)
  --data-dir DIR           the store (event log + snapshots). Without it nothing is persisted.
  --users FILE             SASL PLAIN users: one "user:password" per line, split at the first
                           colon; blank lines and lines starting with # are ignored
  --no-anonymous           refuse SASL ANONYMOUS and clients that skip SASL
  --tls-cert FILE          PEM certificate: serve amqps (TLS) only; needs --tls-key
  --tls-key FILE           PEM private key
  --max-connections N      refuse connections beyond N (default 10000)
  --max-frame-size BYTES   largest frame accepted, declared in Open (default 1048576)
  --max-message-size BYTES largest message accepted from publishers (default 16777216)
  --idle-timeout MS        close connections silent this long; also bounds a partial frame
                           (default 60000; 0 = none)
  --no-auto-create         attaching to a missing queue is refused (amqp:not-found)
  --max-queue-messages N   per-queue limit (refusal: rejected, amqp:resource-limit-exceeded)
  --max-queue-bytes N      per-queue limit on the sum of message sizes
  --dedup-window-count N   message-ids remembered per queue for duplicate detection (default 10000; 0 = off)
  --dedup-window-ms MS     how long a message-id is remembered (default 600000)
  --container-id ID        our Open container-id
  --repair                 the store is damaged beyond a torn tail (the broker refused to start):
                           move the damaged files to DATA_DIR/quarantine/<time>/, start from the
                           intact part of the log and log how many records were dropped
  --log-level L            debug|info|warn|error: what goes to stderr (default warn)
  -h, --help
`;

export interface SingleNodeArgs {
  port: number;
  host: string;
  dataDir: string | undefined;
  usersFile: string | undefined;
  anonymous: boolean;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  maxConnections: number | undefined;
  maxFrameSize: number | undefined;
  maxMessageSize: number | undefined;
  idleTimeoutMs: number | undefined;
  autoCreateQueues: boolean;
  maxQueueMessages: number | undefined;
  maxQueueBytes: number | undefined;
  dedupWindowCount: number | undefined;
  dedupWindowMs: number | undefined;
  containerId: string | undefined;
  repair: boolean;
  logLevel: LogLevel;
  help: boolean;
}

function int(
  name: string,
  raw: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (!/^\d+$/.test(raw) || v < min || v > max) {
    throw new AmqpError('amqp:invalid-field', `--${name} must be an integer in ${min}..${max}, got '${raw}'`);
  }
  return v;
}

/** Parses the single-node flags; throws AmqpError('amqp:invalid-field') on bad input. */
export function parseSingleNodeArgs(argv: readonly string[]): SingleNodeArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        users: { type: 'string' },
        'no-anonymous': { type: 'boolean' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-frame-size': { type: 'string' },
        'max-message-size': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'no-auto-create': { type: 'boolean' },
        'max-queue-messages': { type: 'string' },
        'max-queue-bytes': { type: 'string' },
        'dedup-window-count': { type: 'string' },
        'dedup-window-ms': { type: 'string' },
        'container-id': { type: 'string' },
        repair: { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new AmqpError('amqp:invalid-field', (err as Error).message, { cause: err });
  }
  const s = (k: string): string | undefined => values[k] as string | undefined;
  const tlsCert = s('tls-cert');
  const tlsKey = s('tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new AmqpError('amqp:invalid-field', '--tls-cert and --tls-key go together');
  }
  return {
    port: int('port', s('port'), 0, 65535) ?? 5672,
    host: s('host') ?? '127.0.0.1',
    dataDir: s('data-dir'),
    usersFile: s('users'),
    anonymous: values['no-anonymous'] !== true,
    tlsCert,
    tlsKey,
    maxConnections: int('max-connections', s('max-connections'), 1),
    maxFrameSize: int('max-frame-size', s('max-frame-size'), 512, 0xffffffff),
    maxMessageSize: int('max-message-size', s('max-message-size'), 1),
    idleTimeoutMs: int('idle-timeout', s('idle-timeout'), 0, 0xffffffff),
    autoCreateQueues: values['no-auto-create'] !== true,
    maxQueueMessages: int('max-queue-messages', s('max-queue-messages'), 1),
    maxQueueBytes: int('max-queue-bytes', s('max-queue-bytes'), 1),
    dedupWindowCount: int('dedup-window-count', s('dedup-window-count'), 0),
    dedupWindowMs: int('dedup-window-ms', s('dedup-window-ms'), 0),
    containerId: s('container-id'),
    repair: values.repair === true,
    logLevel: parseLogLevel(s('log-level')),
    help: values.help === true,
  };
}
