/**
 * What a front end may hand queue administration (queue-admin.ts): queue names and a declare's
 * arguments, checked in one place for every front end (the AMQP management node, the HTTP API,
 * the `queues` command's flags). A bad one is a QueueAdminError `invalid`.
 */
import { MANAGEMENT_ADDRESS, queueNameOfAddress } from '../../wire-extensions.js';
import type { QueueOptions } from '../core/events.js';
import { checkAddress } from './attach-support.js';
import { QueueAdminError } from './queue-admin-errors.js';

/** What a declare may ask for (RabbitMQ's queue arguments, named as here). */
export interface DeclareQueueArguments {
  /** Every queue here is durable (its messages are in the log); false is refused. Default true. */
  durable?: boolean;
  /** Exclusive queues do not exist here (a dynamic node is the temporary queue); true is refused. */
  exclusive?: boolean;
  /** Auto-delete queues do not exist here (a dynamic node's lifetime policy is); true is refused. */
  autoDelete?: boolean;
  /** Enqueues beyond this many messages are refused (`x-max-length`). Default: the broker's. */
  maxLength?: number;
  /** Enqueues beyond this many bytes are refused (`x-max-length-bytes`). Default: the broker's. */
  maxLengthBytes?: number;
  /**
   * A message delivered this many times goes to the dead-letter queue (`x-delivery-limit`;
   * docs/broker-features.md#delivery-limit). Overrides the broker-wide `--delivery-limit`.
   */
  deliveryLimit?: number;
  /** Where rejected and poison messages go; null: dropped (`x-dead-letter-queue`). Default `<name>.dlq`. */
  deadLetterQueue?: string | null;
}

/** The name of one declare argument. */
export type DeclareArgument = keyof DeclareQueueArguments;

const FLAG_ARGUMENTS = ['durable', 'exclusive', 'autoDelete'] as const;
const COUNT_ARGUMENTS = ['maxLength', 'maxLengthBytes', 'deliveryLimit'] as const;

/** A declare argument that is a count. */
export type CountArgument = (typeof COUNT_ARGUMENTS)[number];

/** Every declare argument, in the order messages list them. */
export const DECLARE_ARGUMENTS: readonly DeclareArgument[] = [
  ...FLAG_ARGUMENTS,
  ...COUNT_ARGUMENTS,
  'deadLetterQueue',
];

/** The least value of each count (a delivery limit of 0 would dead-letter before delivering). */
export const COUNT_ARGUMENT_MIN: Readonly<Record<CountArgument, number>> = {
  maxLength: 0,
  maxLengthBytes: 0,
  deliveryLimit: 1,
};

/** The greatest value of every count: a varint the codecs store exactly. */
export const COUNT_ARGUMENT_MAX = Number.MAX_SAFE_INTEGER;

/** How a declare's messages name each count. */
const COUNT_LABELS: Readonly<Record<CountArgument, string>> = {
  maxLength: 'max length',
  maxLengthBytes: 'max length bytes',
  deliveryLimit: 'delivery limit',
};

/**
 * The declare arguments a front end was given, type-checked: `get` reads each argument from the
 * request (undefined: not given), `label` names it as the caller's protocol does in messages
 * (`x-max-length` over AMQP, `maxLength` in the HTTP API's JSON). Ranges are declaredOptions'.
 */
export function declareArgumentsFrom(
  get: (argument: DeclareArgument) => unknown,
  label: (argument: DeclareArgument) => string = (argument) => argument,
): DeclareQueueArguments {
  const args: DeclareQueueArguments = {};
  for (const k of FLAG_ARGUMENTS) {
    const v = get(k);
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw new QueueAdminError('invalid', `${label(k)} must be true or false`);
    args[k] = v;
  }
  for (const k of COUNT_ARGUMENTS) {
    const v = get(k);
    if (v === undefined) continue;
    if (typeof v !== 'number') throw new QueueAdminError('invalid', `${label(k)} must be an integer`);
    args[k] = v;
  }
  const dlq = get('deadLetterQueue');
  if (dlq !== undefined) {
    if (dlq !== null && typeof dlq !== 'string')
      throw new QueueAdminError('invalid', `${label('deadLetterQueue')} must be a queue name or null`);
    args.deadLetterQueue = dlq;
  }
  return args;
}

/** The options a declare with `args` commits: the broker's defaults, then the arguments. */
export function declaredOptions(args: DeclareQueueArguments, defaults: QueueOptions): QueueOptions {
  if (args.durable === false)
    throw new QueueAdminError('invalid', 'every queue is durable here (durable: false)');
  if (args.exclusive === true)
    throw new QueueAdminError('invalid', 'exclusive queues are not supported (use a dynamic node)');
  if (args.autoDelete === true)
    throw new QueueAdminError('invalid', 'auto-delete queues are not supported (use a dynamic node)');
  const options: QueueOptions = { ...defaults };
  const maxLength = countArgument('maxLength', args.maxLength);
  const maxLengthBytes = countArgument('maxLengthBytes', args.maxLengthBytes);
  const deliveryLimit = countArgument('deliveryLimit', args.deliveryLimit);
  if (maxLength !== undefined) options.maxMessages = maxLength;
  if (maxLengthBytes !== undefined) options.maxBytes = maxLengthBytes;
  if (deliveryLimit !== undefined) options.deliveryLimit = deliveryLimit;
  if (args.deadLetterQueue !== undefined) {
    if (args.deadLetterQueue !== null) checkNewQueueName(args.deadLetterQueue);
    options.deadLetterQueue = args.deadLetterQueue;
  }
  return options;
}

function countArgument(argument: CountArgument, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  const min = COUNT_ARGUMENT_MIN[argument];
  if (!Number.isSafeInteger(v) || v < min || v > COUNT_ARGUMENT_MAX)
    throw new QueueAdminError(
      'invalid',
      `${COUNT_LABELS[argument]} must be an integer from ${min}, got ${String(v)}`,
    );
  return v;
}

/**
 * A name any operation may look up: an address, the broker's own included (subscription queues
 * `$sub/...`, temporary queues `$temp/...`: a list shows them, so a get, purge or delete takes them).
 */
export function checkQueueName(name: string): void {
  const bad = checkAddress(name);
  if (bad !== undefined) throw new QueueAdminError('invalid', `queue name: ${bad}`);
}

/**
 * A name a declare may create (docs/management.md#names): one an attach can reach, and not one
 * of the broker's own.
 */
export function checkNewQueueName(name: string): void {
  checkQueueName(name);
  // `$`-names are the broker's own (docs/broker-features.md: never auto-created either)
  if (name.startsWith('$'))
    throw new QueueAdminError('invalid', `'${name}': names starting with $ are reserved`);
  // an attach to this address reaches another queue or the management node, never this one
  if (name === MANAGEMENT_ADDRESS || queueNameOfAddress(name) !== name)
    throw new QueueAdminError('invalid', `'${name}': no link could attach to it (docs/management.md#names)`);
}
