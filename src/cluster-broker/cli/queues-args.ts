/**
 * The command line of `quorate-broker queues ACTION [NAME] [flags]` (queues-command.ts runs it):
 * parsed strictly, and every mistake found at once, one line each, so an operator fixes them in
 * one go (docs/management.md#cli).
 */
import { parseArgs } from 'node:util';
import { AmqpError } from '../../errors.js';
import { COUNT_ARGUMENT_MAX, COUNT_ARGUMENT_MIN, type CountArgument } from '../server/queue-admin-checks.js';
import { flagTable, integerFlag, usageProblem } from './flags.js';

export const QUEUES_USAGE = `Usage: quorate-broker queues list|create|purge|delete [NAME] --url URL [flags]

Manages the queues of a running broker over AMQP (the /management node), as a user holding the
"manage" grant. Any member of a cluster will do: a change goes through the replicated log.

  list                   every queue, topic and subscription (a table; --json for programs)
  create NAME            declare queue NAME (found with the same arguments: nothing changes)
  purge NAME             drop the messages no consumer holds; prints how many
  delete NAME            delete the queue with its messages; prints how many it held

  --url URL              amqp:// or amqps:// address of a member; repeat it or give a comma
                         list to name several members (any one that answers is used)
  --user U               SASL PLAIN user (else the environment's QUORATE_USER; neither: anonymous)
  --password P           its password (else the environment's QUORATE_PASSWORD)
  --max-length N         create: enqueues beyond N messages are refused
  --max-length-bytes N   create: enqueues beyond N bytes are refused
  --delivery-limit N     create: a message delivered N times goes to the dead-letter queue
  --json                 print the result as JSON
  --timeout MS           connecting and each request (default 10000)

Exit code 0 on success, 1 when the broker refuses or cannot be reached, 2 on bad usage.
`;

/** The actions of `queues`. */
const QUEUE_ACTIONS = ['list', 'create', 'purge', 'delete'] as const;
export type QueueAction = (typeof QUEUE_ACTIONS)[number];

/** Where the credentials came from (the command says so when the broker refuses them). */
export type CredentialSource = 'flags' | 'environment' | 'none';

/** What `queues` was asked to do. */
export interface QueuesArgs {
  help: boolean;
  action: QueueAction;
  /** The queue (every action but `list`). */
  name: string | undefined;
  urls: string[];
  user: string | undefined;
  password: string | undefined;
  credentials: CredentialSource;
  maxLength: number | undefined;
  maxLengthBytes: number | undefined;
  deliveryLimit: number | undefined;
  json: boolean;
  timeoutMs: number;
}

/** Several command-line mistakes at once; `problems` has one line each. */
export class QueuesUsageError extends AmqpError {
  constructor(readonly problems: readonly string[]) {
    super('amqp:invalid-field', problems.join('; '));
    this.name = 'QueuesUsageError';
  }
}

const CREATE_ONLY = ['max-length', 'max-length-bytes', 'delivery-limit'] as const;

/** `argv` (after `queues`) parsed; QueuesUsageError listing every mistake found. */
export function parseQueuesArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): QueuesArgs {
  let parsed: ReturnType<typeof parseRaw>;
  try {
    parsed = parseRaw(argv);
  } catch (err) {
    throw new QueuesUsageError([usageProblem(err)]);
  }
  const { values, positionals } = parsed;
  const problems: string[] = [];
  const help = values.help === true;
  const [rawAction, name, ...extra] = positionals;
  let action: QueueAction = 'list';
  if (rawAction === undefined) {
    if (!help) problems.push(`give an action: ${QUEUE_ACTIONS.join(', ')}`);
  } else if ((QUEUE_ACTIONS as readonly string[]).includes(rawAction)) action = rawAction as QueueAction;
  else problems.push(`unknown action '${rawAction}' (known: ${QUEUE_ACTIONS.join(', ')})`);
  if (rawAction !== undefined && action !== 'list' && name === undefined)
    problems.push(`${action} needs a queue NAME`);
  if (rawAction === 'list' && name !== undefined)
    problems.push(`unexpected argument '${name}': list takes no NAME`);
  for (const e of extra) problems.push(`unexpected argument '${e}'`);

  const urls = (values.url ?? []).flatMap((u) => u.split(',')).map((u) => u.trim());
  if (urls.length === 0 && !help) problems.push('give --url amqp://HOST:PORT (a member of the broker)');
  for (const u of urls) {
    const bad = badAmqpUrl(u);
    if (bad !== undefined) problems.push(bad);
  }
  const count = (flag: string, raw: string | undefined, min: number, max?: number): number | undefined => {
    try {
      return integerFlag(flag, raw, min, max);
    } catch (err) {
      problems.push(usageProblem(err));
      return undefined;
    }
  };
  // the declare's own ranges, so a bad one is a usage mistake (exit 2) before any connection
  const declared = (flag: (typeof CREATE_ONLY)[number], argument: CountArgument): number | undefined =>
    count(flag, values[flag], COUNT_ARGUMENT_MIN[argument], COUNT_ARGUMENT_MAX);
  const maxLength = declared('max-length', 'maxLength');
  const maxLengthBytes = declared('max-length-bytes', 'maxLengthBytes');
  const deliveryLimit = declared('delivery-limit', 'deliveryLimit');
  const timeoutMs = count('timeout', values.timeout, 1) ?? 10_000;
  if (action !== 'create' && rawAction === action)
    for (const f of CREATE_ONLY) if (values[f] !== undefined) problems.push(`--${f} is for create only`);
  if (problems.length > 0) throw new QueuesUsageError(problems);

  const fromFlags = values.user !== undefined || values.password !== undefined;
  const user = values.user ?? env.QUORATE_USER;
  const password = values.password ?? env.QUORATE_PASSWORD;
  const credentials: CredentialSource = fromFlags
    ? 'flags'
    : user !== undefined || password !== undefined
      ? 'environment'
      : 'none';
  return {
    help,
    action,
    name,
    urls,
    user,
    password,
    credentials,
    maxLength,
    maxLengthBytes,
    deliveryLimit,
    json: values.json === true,
    timeoutMs,
  };
}

function parseRaw(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      ...flagTable(['user', 'password', ...CREATE_ONLY, 'timeout'], ['json']),
      url: { type: 'string', multiple: true },
    },
    strict: true,
    allowPositionals: true,
  });
}

/** Why `u` is not a member's AMQP address, or undefined when it is one. */
function badAmqpUrl(u: string): string | undefined {
  if (!URL.canParse(u)) return `--url '${u}' is not a URL (amqp://HOST:PORT)`;
  const { protocol } = new URL(u);
  if (protocol !== 'amqp:' && protocol !== 'amqps:') return `--url '${u}' is not an amqp:// or amqps:// URL`;
  return undefined;
}
