/**
 * Answering a peer's attach: a publisher link to a queue (our receiver), a consumer link from a
 * queue or a virtual source (our sender), or a refusal with the narrowest condition.
 */
import type { Attach } from '../../codec/index.js';
import type { Link, ReceiverLink, SenderLink } from '../../protocol/index.js';
import type { BrokerConnection } from './broker-connection.js';
import { ConsumerLink } from './consumer-link.js';
import { PublisherLink } from './publisher-link.js';
import { VirtualLink } from './virtual-link.js';

/** Outcomes our sources support (symbols). */
const OUTCOMES = ['amqp:accepted:list', 'amqp:rejected:list', 'amqp:released:list', 'amqp:modified:list'];
const MAX_ADDRESS_LENGTH = 1024;
/** Delivery contract 8: sources advertise modified{delivery-failed}. */
const DEFAULT_OUTCOME_STATE = { type: 'modified', deliveryFailed: true } as const;

export function attachPublisher(conn: BrokerConnection, link: ReceiverLink, attach: Attach): void {
  const target = attach.target;
  if (target === undefined || 'coordinator' in target) {
    link.refuse({
      condition: 'amqp:not-implemented',
      description: target === undefined ? 'a target is required' : 'transactions are not supported',
    });
    return;
  }
  const t = target as { address?: string; dynamic?: boolean };
  const address = t.address;
  const bad = t.dynamic ? 'dynamic targets are not supported' : checkAddress(address);
  if (bad !== undefined) {
    link.refuse({ condition: t.dynamic ? 'amqp:not-implemented' : 'amqp:invalid-field', description: bad });
    return;
  }
  if (!allowed(conn, link, 'send', address!)) return;
  ensureQueue(conn, link, address!, () => {
    const h = new PublisherLink(conn, link, address!);
    link.context = h;
    conn.addHandler(h);
    link.accept({
      target: { address: address! },
      sndSettleMode: attach.sndSettleMode === 0 || attach.sndSettleMode === 1 ? attach.sndSettleMode : 2,
      rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
      maxMessageSize: conn.ctx.opts.maxMessageSize,
    });
    h.start();
  });
}

export function attachConsumer(conn: BrokerConnection, link: SenderLink, attach: Attach): void {
  const source = attach.source;
  if (source === undefined) {
    link.refuse({ condition: 'amqp:invalid-field', description: 'a source is required' });
    return;
  }
  const address = source.address;
  const bad = source.dynamic ? 'dynamic sources are not supported' : checkAddress(address);
  if (bad !== undefined) {
    link.refuse({
      condition: source.dynamic ? 'amqp:not-implemented' : 'amqp:invalid-field',
      description: bad,
    });
    return;
  }
  if (hasEntries(source.filter)) {
    link.refuse({ condition: 'amqp:not-implemented', description: 'source filters are not supported' });
    return;
  }
  if (!allowed(conn, link, 'receive', address!)) return;
  const virtual = conn.ctx.opts.virtualSources.get(address!);
  if (virtual !== undefined) {
    const h = new VirtualLink(conn, link);
    link.context = h;
    conn.addHandler(h);
    link.accept({ source: { address: address! }, sndSettleMode: 1, rcvSettleMode: 0 });
    h.start(virtual, address!);
    return;
  }
  ensureQueue(conn, link, address!, () => {
    const presettled = attach.sndSettleMode === 1;
    const h = new ConsumerLink(conn, link, address!, presettled);
    link.context = h;
    conn.addHandler(h);
    link.accept({
      source: {
        address: address!,
        defaultOutcome: DEFAULT_OUTCOME_STATE,
        outcomes: OUTCOMES,
        distributionMode: 'move',
      },
      sndSettleMode: presettled ? 1 : attach.sndSettleMode === 0 ? 0 : 2,
      rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
    });
    h.start();
  });
}

/** Runs `then` once `queue` exists (declaring it if allowed), or refuses the link. */
function ensureQueue(conn: BrokerConnection, link: Link, queue: string, then: () => void): void {
  const { backend, opts } = conn.ctx;
  const proceed = (): void => {
    if (conn.closed || link.state !== 'attach-received') return;
    then();
    conn.scheduleFlush();
  };
  if (backend.state.hasQueue(queue)) {
    then();
    return;
  }
  if (!opts.autoCreateQueues || queue.startsWith('$')) {
    link.refuse({ condition: 'amqp:not-found', description: `no queue '${queue}'` });
    return;
  }
  const cannot = whyNotCreate(conn);
  if (cannot !== undefined) {
    link.refuse({
      condition: 'amqp:resource-limit-exceeded',
      description: `cannot create '${queue}': ${cannot}`,
    });
    return;
  }
  conn.queuesCreated++;
  backend
    .submit({ type: 'declare', leaderTime: backend.now(), queue, options: opts.queueDefaults })
    .then(proceed, (err: unknown) => {
      conn.queuesCreated--;
      if (conn.closed || link.state !== 'attach-received') return;
      const e = err as { condition?: unknown; description?: unknown };
      link.refuse({
        condition: typeof e.condition === 'string' ? e.condition : 'amqp:internal-error',
        description: typeof e.description === 'string' ? e.description : `cannot declare '${queue}'`,
      });
      conn.scheduleFlush();
    })
    .catch((err: unknown) => conn.internalError(err));
}

/** Why this connection may not auto-create a queue now, or undefined when it may. */
function whyNotCreate(conn: BrokerConnection): string | undefined {
  const { opts, alarm } = conn.ctx;
  if (alarm?.blocked) return `resource alarm (${alarm.reason})`;
  if (conn.queuesCreated >= opts.maxQueuesPerConnection) {
    return `this connection created ${conn.queuesCreated} queues (limit ${opts.maxQueuesPerConnection})`;
  }
  return undefined;
}

/**
 * Whether the connection's user may attach this way to `address` (permissions.ts); refuses the
 * link with amqp:unauthorized-access when not. The connection stays open.
 */
function allowed(
  conn: BrokerConnection,
  link: Link,
  direction: 'send' | 'receive',
  address: string,
): boolean {
  const { permissions, logger } = conn.ctx.opts;
  if (permissions === undefined) return true;
  const ok =
    direction === 'send'
      ? permissions.maySend(conn.user, address)
      : permissions.mayReceive(conn.user, address);
  if (ok) return true;
  const who = conn.user === undefined ? 'anonymous' : `user '${conn.user}'`;
  logger.info?.({ user: conn.user, address, direction }, 'attach refused: not permitted');
  link.refuse({
    condition: 'amqp:unauthorized-access',
    description: `${who} may not ${direction === 'send' ? 'send to' : 'receive from'} '${address}'`,
  });
  return false;
}

/** A filter set with at least one entry (whatever shape the peer sent it in). */
function hasEntries(filter: unknown): boolean {
  if (filter === undefined || filter === null) return false;
  if (filter instanceof Map) return filter.size > 0;
  if (typeof filter === 'object') return Object.keys(filter).length > 0;
  return true;
}

/** Why an address cannot name a queue, or undefined when it can. */
function checkAddress(address: unknown): string | undefined {
  if (address === undefined || address === '') return 'an address is required';
  // the spec types the address `*`: a peer can send any type, and only a string names a queue
  if (typeof address !== 'string') return 'the address must be a string';
  if (address.length > MAX_ADDRESS_LENGTH) return `address longer than ${MAX_ADDRESS_LENGTH} characters`;
  return undefined;
}
