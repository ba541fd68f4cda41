/**
 * What the attach paths (attach.ts, topic-attach.ts) and the anonymous relay (relay.ts) share:
 * the checks on an address (form, permission), auto-creating the queue or topic a link names
 * within the connection's caps, refusing a link for the narrowest reason.
 */
import type { AmqpErrorBody } from '../../codec/index.js';
import type { Link } from '../../protocol/index.js';
import { queueNameOfAddress } from '../../wire-extensions.js';
import type { QueueOptions } from '../core/events.js';
import type { BrokerConnection } from './broker-connection.js';
import type { LinkHost } from './link-host.js';

/** The longest address that names a queue (a link's or a relayed message's `to`). */
export const MAX_ADDRESS_LENGTH = 1024;

/** Why an address cannot name a queue, or undefined when it can. */
export function checkAddress(address: unknown): string | undefined {
  if (address === undefined || address === null || address === '') return 'an address is required';
  // the spec types the address `*`: a peer can send any type, and only a string names a queue
  if (typeof address !== 'string') return 'the address must be a string';
  if (address.length > MAX_ADDRESS_LENGTH) return `address longer than ${MAX_ADDRESS_LENGTH} characters`;
  return undefined;
}

/**
 * The queue an address names (a link's, or a relayed message's `to`): a plain name, or a
 * RabbitMQ v2 address `/queues/NAME` (docs/management.md#v2-addresses), percent-decoded; or why
 * it names none. The relay calls this once per message: a name comes back as the string itself
 * (nothing allocated), and a plain name, already checked, is not checked twice.
 */
export function queueOfAddress(address: unknown): string | { why: string } {
  const bad = checkAddress(address);
  if (bad !== undefined) return { why: bad };
  const name = queueNameOfAddress(address as string);
  if (name === undefined) return { why: `'${String(address)}' is not a valid /queues/NAME address` };
  if (name === address) return name;
  const badName = checkAddress(name);
  return badName === undefined ? name : { why: badName };
}

/**
 * Why the connection's user may not send to / receive from `address` (permissions.ts), or
 * undefined when it may. The caller logs the refusal (an attach at info; a relayed message at
 * debug, as a relay link can be refused once per message).
 */
export function notPermitted(
  host: LinkHost,
  direction: 'send' | 'receive',
  address: string,
): AmqpErrorBody | undefined {
  const { permissions } = host.ctx.opts;
  if (permissions === undefined) return undefined;
  const ok =
    direction === 'send'
      ? permissions.maySend(host.user, address)
      : permissions.mayReceive(host.user, address);
  if (ok) return undefined;
  const who = host.user === undefined ? 'anonymous' : `user '${host.user}'`;
  return {
    condition: 'amqp:unauthorized-access',
    description: `${who} may not ${direction === 'send' ? 'send to' : 'receive from'} '${address}'`,
  };
}

/**
 * Runs `then` once `node.name` exists (declaring it with `node.options` when it may be
 * auto-created: never a `$`-name), or refuses the link. `then` also runs for a name that already
 * exists as something else: the caller checks what it found.
 */
export function ensureDeclared(
  conn: BrokerConnection,
  link: Link,
  node: { name: string; kind: 'queue' | 'topic'; options: QueueOptions },
  then: () => void,
): void {
  const { backend, opts } = conn.ctx;
  const { name, kind } = node;
  const proceed = (): void => {
    if (conn.closed || link.state !== 'attach-received') return;
    then();
    conn.scheduleFlush();
  };
  if (backend.state.hasQueue(name)) {
    then();
    return;
  }
  if (!opts.autoCreateQueues || name.startsWith('$')) {
    link.refuse({ condition: 'amqp:not-found', description: `no ${kind} '${name}'` });
    return;
  }
  const cannot = whyNotCreate(conn);
  if (cannot !== undefined) {
    link.refuse({
      condition: 'amqp:resource-limit-exceeded',
      description: `cannot create '${name}': ${cannot}`,
    });
    return;
  }
  conn.queuesCreated++;
  backend
    .submit({ type: 'declare', leaderTime: backend.now(), queue: name, options: node.options })
    .then(proceed, (err: unknown) => {
      conn.queuesCreated--;
      refuseOnError(conn, link, err, `cannot declare ${kind} '${name}'`);
    })
    .catch((err: unknown) => conn.internalError(err));
}

/** Refuses a link still waiting for its answer with a failed commit's condition (or `fallback`). */
export function refuseOnError(conn: BrokerConnection, link: Link, err: unknown, fallback: string): void {
  if (conn.closed || link.state !== 'attach-received') return;
  const e = err as { condition?: unknown; description?: unknown };
  link.refuse({
    condition: typeof e.condition === 'string' ? e.condition : 'amqp:internal-error',
    description: typeof e.description === 'string' ? e.description : fallback,
  });
  conn.scheduleFlush();
}

/** Why this connection may not auto-create a queue now, or undefined when it may. */
export function whyNotCreate(host: LinkHost): string | undefined {
  const { opts, alarm } = host.ctx;
  if (alarm?.blocked) return `resource alarm (${alarm.reason})`;
  if (host.queuesCreated >= opts.maxQueuesPerConnection) {
    return `this connection created ${host.queuesCreated} queues (limit ${opts.maxQueuesPerConnection})`;
  }
  return undefined;
}
