/** Flags of the single-node `quorate-broker` (no subcommand). */
import { AmqpError } from '../../errors.js';
import { type LogLevel, parseLogLevel } from './cli-logger.js';
import { flagTable, integerFlag, parseFlags } from './flags.js';

export const SINGLE_NODE_USAGE = `Usage: quorate-broker [--port 5672] [--host 127.0.0.1] [--data-dir DIR] [options]
       quorate-broker cluster --help      (a supervised local cluster)
       quorate-broker node --help         (one member of a cluster)
       quorate-broker status URL...       (a member's overview as a table; --help)
       quorate-broker passwd FILE USER    (set a user's password in a users file)

BYTES take a K, M or G suffix (powers of 1024: 512M, 2G).

Runs a single-node AMQP 1.0 broker. Prints one JSON line once it listens:
  {"ready":true,"amqpPort":PORT,"pid":PID}   (plus "httpPort":P with --http-port, "wsPort":W
                                              with --ws-port)
and stops cleanly on SIGTERM/SIGINT (connections closed, store flushed).

  --port P                 AMQP port (default 5672; 0 = a free port, named in the ready line)
  --host H                 address to bind (default 127.0.0.1)
  --data-dir DIR           the store (event log + snapshots). Without it nothing is persisted.
  --users FILE             SASL PLAIN users: one "user:HASH" per line (salted scrypt), written by
                           "quorate-broker passwd FILE USER"; a plaintext password is refused
  --no-anonymous           refuse SASL ANONYMOUS and clients that skip SASL
  --permissions FILE       JSON: which addresses each user may send to / receive from, e.g.
                           {"users":{"alice":{"send":["orders","events.*"],"receive":["orders"]}},
                            "anonymous":{"receive":["public.*"]}}; an attach outside them is
                           refused (amqp:unauthorized-access). Default: everyone may do everything
  --tls-cert FILE          PEM certificate: serve amqps (TLS) only; needs --tls-key
  --tls-key FILE           PEM private key
  --require-tls-for-plain  refuse SASL PLAIN over a plain socket (default: on with --tls-cert;
                           --no-require-tls-for-plain turns it off)
  --ws-port P              also serve AMQP over WebSocket (subprotocol amqp) on this port (0 = a
                           free one, named in the ready line as wsPort); wss:// with --tls-cert;
                           same users, permissions and limits (docs/websocket.md)
  --ws-allow-origin ORIGINS
                           comma-separated browser origins (https://app.example) allowed on the
                           WebSocket port, or * for any; a browser Origin not listed gets 403.
                           Requests without an Origin header (not browsers) are allowed
  --max-connections N      refuse connections beyond N (default 10000)
  --max-connections-per-address N
                           refuse connections from one source address beyond N (default 2000)
  --max-sessions-per-connection N
                           sessions per connection (default 256; declared as channel-max N-1)
  --max-links-per-connection N
                           links attached at once per connection (default 1000)
  --max-queues-per-connection N
                           queues one connection may auto-create (default 1000)
  --max-memory BYTES|P%    memory limit (heap + buffers): from 85% of it publishers get no more
                           credit until it drops (default 40% of the machine's or cgroup's
                           memory; 0 = off)
  --min-disk-free BYTES    disk alarm: below this free space in --data-dir publishers get no
                           more credit until it clears (default 1GiB; 0 = off)
  --max-frame-size BYTES   largest frame accepted, declared in Open (default 1048576)
  --max-message-size BYTES largest message accepted from publishers (default 16777216)
  --idle-timeout MS        close connections silent this long; also bounds a partial frame
                           (default 60000; 0 = none)
  --no-auto-create         attaching to a missing queue is refused (amqp:not-found)
  --max-queue-messages N   per-queue limit (refusal: rejected, amqp:resource-limit-exceeded)
  --max-queue-bytes BYTES  per-queue limit on the sum of message sizes (default 2GiB; 0 = none)
  --delivery-limit N       a message whose delivery failed N times (its consumer's link or
                           connection lost, or modified with delivery-failed) goes to the
                           queue's dead-letter queue, <queue>.dlq (default: no limit); applies to
                           queues created while it is set
  --dedup                  deduplicate by message-id on every queue, for every sender (default:
                           only for senders desiring the link capability quorate:dedup)
  --dedup-window-count N   message-ids remembered per queue for duplicate detection (default 10000; 0 = off)
  --dedup-window-ms MS     how long a message-id is remembered (default 600000)
  --owner-grace-ms MS      how long a dynamic node or non-durable topic subscription outlives
                           its owner's lost link, waiting for it to re-attach (default 30000)
  --container-id ID        our Open container-id
  --cluster-id ID          the cluster id in our Open and in federation routes (default: one
                           generated on first start, kept in DATA_DIR/cluster-id; without
                           --data-dir a new one per start)
  --federation FILE        JSON: queues to move here from upstream brokers on demand, e.g.
                           {"upstreams":[{"name":"eu","urls":["amqp://eu1:5672"],"queues":["orders"]}]}
                           (docs/federation.md)
  --http-port P            serve the status page, JSON API, /metrics (Prometheus), /healthz and
                           /readyz on this port (0 = a free one, named in the ready line as
                           httpPort); off by default. With --users they ask for the same
                           credentials (HTTP basic), except /healthz and /readyz
  --http-host H            address the HTTP server binds (default: --host)
  --http-max-connections N HTTP connections open at once (default 64); more are closed at once,
                           so the AMQP port and the store keep their file descriptors
  --http-allowed-hosts NAMES
                           comma-separated host names the HTTP port answers to besides IP
                           addresses, localhost and --http-host (others get 421: DNS rebinding)
  --repair                 the store is damaged beyond a torn tail (the broker refused to start):
                           move the damaged files to DATA_DIR/quarantine/<time>/, start from the
                           intact part of the log and log how many records were dropped
  --log-level L            trace|debug|info|warn|error: what goes to stderr (default warn;
                           trace adds every AMQP frame in and out)
  -h, --help
`;

export interface SingleNodeArgs {
  port: number;
  host: string;
  dataDir: string | undefined;
  usersFile: string | undefined;
  anonymous: boolean;
  permissionsFile: string | undefined;
  /** undefined: the default (on with TLS). */
  requireTlsForPlain: boolean | undefined;
  maxConnectionsPerAddress: number | undefined;
  maxSessionsPerConnection: number | undefined;
  maxLinksPerConnection: number | undefined;
  maxQueuesPerConnection: number | undefined;
  /** Bytes, or a fraction of the machine's memory (`{ fraction }`). */
  maxMemory: number | { fraction: number } | undefined;
  minDiskFree: number | undefined;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  maxConnections: number | undefined;
  maxFrameSize: number | undefined;
  maxMessageSize: number | undefined;
  idleTimeoutMs: number | undefined;
  autoCreateQueues: boolean;
  maxQueueMessages: number | undefined;
  maxQueueBytes: number | undefined;
  deliveryLimit: number | undefined;
  dedup: boolean;
  dedupWindowCount: number | undefined;
  dedupWindowMs: number | undefined;
  ownerGraceMs: number | undefined;
  containerId: string | undefined;
  clusterId: string | undefined;
  federationFile: string | undefined;
  httpPort: number | undefined;
  httpHost: string | undefined;
  httpMaxConnections: number | undefined;
  httpAllowedHosts: string[] | undefined;
  wsPort: number | undefined;
  wsAllowOrigins: string[] | undefined;
  repair: boolean;
  logLevel: LogLevel;
  help: boolean;
}

const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** A byte count: digits with an optional K/M/G/T suffix (KiB, MiB... also accepted). */
export function byteSize(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d+)\s*([KMGT]?)(?:i?B)?$/i.exec(raw.trim());
  const v = m ? Number(m[1]) * UNITS[m[2]!.toUpperCase()]! : Number.NaN;
  if (!Number.isSafeInteger(v)) {
    throw new AmqpError(
      'amqp:invalid-field',
      `--${name} must be a byte count such as 1073741824 or 1G, got '${raw}'`,
    );
  }
  return v;
}

function memoryLimit(raw: string | undefined): number | { fraction: number } | undefined {
  if (raw === undefined || !raw.trim().endsWith('%')) return byteSize('max-memory', raw);
  const pct = Number(raw.trim().slice(0, -1));
  if (!Number.isFinite(pct) || pct <= 0 || pct > 100) {
    throw new AmqpError('amqp:invalid-field', `--max-memory percentage must be in (0, 100], got '${raw}'`);
  }
  return { fraction: pct / 100 };
}

function hostList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw.split(',').map((h) => h.trim().toLowerCase());
  if (names.some((h) => h === '' || /[\s/:]/.test(h))) {
    throw new AmqpError(
      'amqp:invalid-field',
      `--http-allowed-hosts takes host names separated by commas (no port), got '${raw}'`,
    );
  }
  return names;
}

/** `--ws-allow-origin`: `*`, or origins (`scheme://host[:port]`, no path), comma-separated. */
function originList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((o) => {
    const origin = o.trim();
    if (origin === '*') return origin;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (
      parsed === undefined ||
      parsed.origin === 'null' ||
      parsed.origin !== origin.toLowerCase().replace(/\/$/, '')
    )
      throw new AmqpError(
        'amqp:invalid-field',
        `--ws-allow-origin takes origins like https://app.example (scheme, host, port; no path) or *, got '${origin}'`,
      );
    return parsed.origin;
  });
}

/** Server flags that take a value. */
const VALUED_FLAGS = [
  'port',
  'host',
  'data-dir',
  'users',
  'permissions',
  'max-connections-per-address',
  'max-sessions-per-connection',
  'max-links-per-connection',
  'max-queues-per-connection',
  'max-memory',
  'min-disk-free',
  'tls-cert',
  'tls-key',
  'max-connections',
  'max-frame-size',
  'max-message-size',
  'idle-timeout',
  'max-queue-messages',
  'max-queue-bytes',
  'delivery-limit',
  'dedup-window-count',
  'dedup-window-ms',
  'owner-grace-ms',
  'container-id',
  'cluster-id',
  'federation',
  'http-port',
  'http-host',
  'http-max-connections',
  'http-allowed-hosts',
  'ws-port',
  'ws-allow-origin',
  'log-level',
] as const;
/** Server flags that take none. */
const SWITCHES = [
  'no-anonymous',
  'require-tls-for-plain',
  'no-require-tls-for-plain',
  'no-auto-create',
  'dedup',
  'repair',
] as const;

/** Parses the single-node flags; throws AmqpError('amqp:invalid-field') on bad input. */
export function parseSingleNodeArgs(argv: readonly string[]): SingleNodeArgs {
  const values: Record<string, string | boolean | undefined> = parseFlags(
    argv,
    flagTable(VALUED_FLAGS, SWITCHES),
  );
  const s = (k: string): string | undefined => values[k] as string | undefined;
  const tlsCert = s('tls-cert');
  const tlsKey = s('tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new AmqpError('amqp:invalid-field', '--tls-cert and --tls-key go together');
  }
  if (s('ws-allow-origin') !== undefined && s('ws-port') === undefined)
    throw new AmqpError('amqp:invalid-field', '--ws-allow-origin needs --ws-port');
  if (values['require-tls-for-plain'] === true && values['no-require-tls-for-plain'] === true) {
    throw new AmqpError(
      'amqp:invalid-field',
      '--require-tls-for-plain and --no-require-tls-for-plain contradict',
    );
  }
  return {
    port: integerFlag('port', s('port'), 0, 65535) ?? 5672,
    host: s('host') ?? '127.0.0.1',
    dataDir: s('data-dir'),
    usersFile: s('users'),
    anonymous: values['no-anonymous'] !== true,
    permissionsFile: s('permissions'),
    requireTlsForPlain:
      values['require-tls-for-plain'] === true
        ? true
        : values['no-require-tls-for-plain'] === true
          ? false
          : undefined,
    maxConnectionsPerAddress: integerFlag('max-connections-per-address', s('max-connections-per-address'), 1),
    maxSessionsPerConnection: integerFlag(
      'max-sessions-per-connection',
      s('max-sessions-per-connection'),
      1,
      65536,
    ),
    maxLinksPerConnection: integerFlag('max-links-per-connection', s('max-links-per-connection'), 1),
    maxQueuesPerConnection: integerFlag('max-queues-per-connection', s('max-queues-per-connection'), 0),
    maxMemory: memoryLimit(s('max-memory')),
    minDiskFree: byteSize('min-disk-free', s('min-disk-free')),
    tlsCert,
    tlsKey,
    maxConnections: integerFlag('max-connections', s('max-connections'), 1),
    maxFrameSize: integerFlag('max-frame-size', s('max-frame-size'), 512, 0xffffffff),
    maxMessageSize: integerFlag('max-message-size', s('max-message-size'), 1),
    idleTimeoutMs: integerFlag('idle-timeout', s('idle-timeout'), 0, 0xffffffff),
    autoCreateQueues: values['no-auto-create'] !== true,
    maxQueueMessages: integerFlag('max-queue-messages', s('max-queue-messages'), 1),
    maxQueueBytes: byteSize('max-queue-bytes', s('max-queue-bytes')),
    deliveryLimit: integerFlag('delivery-limit', s('delivery-limit'), 1),
    dedup: values.dedup === true,
    dedupWindowCount: integerFlag('dedup-window-count', s('dedup-window-count'), 0),
    dedupWindowMs: integerFlag('dedup-window-ms', s('dedup-window-ms'), 0),
    ownerGraceMs: integerFlag('owner-grace-ms', s('owner-grace-ms'), 1),
    containerId: s('container-id'),
    clusterId: s('cluster-id'),
    federationFile: s('federation'),
    httpPort: integerFlag('http-port', s('http-port'), 0, 65535),
    httpHost: s('http-host'),
    httpMaxConnections: integerFlag('http-max-connections', s('http-max-connections'), 1),
    httpAllowedHosts: hostList(s('http-allowed-hosts')),
    wsPort: integerFlag('ws-port', s('ws-port'), 0, 65535),
    wsAllowOrigins: originList(s('ws-allow-origin')),
    repair: values.repair === true,
    logLevel: parseLogLevel(s('log-level')),
    help: values.help === true,
  };
}
