/**
 * `quorate-broker queues list|create|purge|delete`: queue management for operators over AMQP, as
 * any client does it (`conn.management()`, docs/management.md#cli), so it works against any
 * member of a cluster and every change goes through the replicated log.
 */

import type { Connection } from '../../client/api.js';
import { connect } from '../../client/connection.js';
import type { DeclareQueueOptions, ManagementQueueInfo } from '../../client/management.js';
import { AmqpError } from '../../errors.js';
import { QUEUE_ARGUMENTS } from '../../wire-extensions.js';
import type { CliIo } from './io.js';
import {
  type CredentialSource,
  parseQueuesArgs,
  QUEUES_USAGE,
  type QueuesArgs,
  QueuesUsageError,
} from './queues-args.js';
import { formatTable } from './table.js';

const COMMAND = 'quorate-broker queues';

export async function runQueuesCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let args: QueuesArgs;
  try {
    args = parseQueuesArgs(argv);
  } catch (err) {
    const problems = err instanceof QueuesUsageError ? err.problems : [String(err)];
    for (const p of problems) io.stderr.write(`${COMMAND}: ${p}\n`);
    io.stderr.write(`see '${COMMAND} --help'\n`);
    return 2;
  }
  if (args.help) {
    io.stdout.write(QUEUES_USAGE);
    return 0;
  }
  let conn: Connection | undefined;
  try {
    conn = await connect({
      urls: args.urls,
      ...(args.user !== undefined ? { username: args.user } : {}),
      ...(args.password !== undefined ? { password: args.password } : {}),
      // an operator's one request: each member given is tried in turn, within the deadline
      reconnect: { maxAttempts: args.urls.length, maxTimeMs: args.timeoutMs },
      randomizeMembers: false,
      timeoutMs: args.timeoutMs,
    });
    const m = await conn.management({ timeoutMs: args.timeoutMs });
    const call = { timeoutMs: args.timeoutMs };
    const name = args.name ?? '';
    switch (args.action) {
      case 'list': {
        const queues = await m.listQueues(call);
        io.stdout.write(args.json ? `${JSON.stringify(queues, null, 2)}\n` : queueTable(queues));
        break;
      }
      case 'create': {
        const q = await m.declareQueue(name, declareOptions(args), call);
        io.stdout.write(args.json ? `${JSON.stringify(q, null, 2)}\n` : `queue '${q.name}' declared\n`);
        break;
      }
      case 'purge': {
        const n = await m.purgeQueue(name, call);
        io.stdout.write(
          args.json ? `${JSON.stringify({ name, purged: n })}\n` : `purged ${n} messages from '${name}'\n`,
        );
        break;
      }
      case 'delete': {
        const n = await m.deleteQueue(name, call);
        io.stdout.write(
          args.json
            ? `${JSON.stringify({ name, deleted: true, messages: n })}\n`
            : `deleted '${name}' (${n} messages dropped)\n`,
        );
        break;
      }
    }
    return 0;
  } catch (err) {
    io.stderr.write(`${COMMAND}: ${failure(err, args.credentials)}\n`);
    return 1;
  } finally {
    await conn?.close({ timeoutMs: args.timeoutMs }).catch(() => undefined);
  }
}

function declareOptions(args: QueuesArgs): DeclareQueueOptions {
  const o: DeclareQueueOptions = {};
  if (args.maxLength !== undefined) o.maxLength = args.maxLength;
  if (args.maxLengthBytes !== undefined) o.maxLengthBytes = args.maxLengthBytes;
  if (args.deliveryLimit !== undefined) o.deliveryLimit = args.deliveryLimit;
  return o;
}

const CREDENTIALS_FROM: Record<CredentialSource, string> = {
  flags: 'credentials from --user/--password',
  environment: 'credentials from QUORATE_USER/QUORATE_PASSWORD',
  none: 'no credentials: anonymous',
};

/** One line: what the broker said, and for a refusal whose credentials were used. */
function failure(err: unknown, credentials: CredentialSource): string {
  const e = err as Partial<AmqpError> & { status?: number; message?: string };
  const text = err instanceof AmqpError ? (err.description ?? err.condition) : String(e.message ?? err);
  const status = typeof e.status === 'number' ? ` (${e.status})` : '';
  const refused = err instanceof AmqpError && err.condition === 'amqp:unauthorized-access';
  return `${text}${status}${refused ? ` [${CREDENTIALS_FROM[credentials]}]` : ''}`;
}

function argument(q: ManagementQueueInfo, key: string): string {
  const v = q.arguments[key];
  return v === undefined || v === null ? '-' : String(v);
}

function queueTable(queues: readonly ManagementQueueInfo[]): string {
  const rows = [['NAME', 'MESSAGES', 'MAX-LENGTH', 'MAX-BYTES', 'DELIVERY-LIMIT', 'DEAD-LETTER']];
  for (const q of queues)
    rows.push([
      q.name,
      String(q.messageCount),
      argument(q, QUEUE_ARGUMENTS.maxLength),
      argument(q, QUEUE_ARGUMENTS.maxLengthBytes),
      argument(q, QUEUE_ARGUMENTS.deliveryLimit),
      argument(q, QUEUE_ARGUMENTS.deadLetterQueue),
    ]);
  return formatTable(rows);
}
