/**
 * What the attach paths (attach.ts, topic-attach.ts) share: auto-creating the queue or topic a
 * link names, refusing a link for the narrowest reason.
 */
import type { Link } from '../../protocol/index.js';
import type { QueueOptions } from '../core/events.js';
import type { BrokerConnection } from './broker-connection.js';

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
function whyNotCreate(conn: BrokerConnection): string | undefined {
  const { opts, alarm } = conn.ctx;
  if (alarm?.blocked) return `resource alarm (${alarm.reason})`;
  if (conn.queuesCreated >= opts.maxQueuesPerConnection) {
    return `this connection created ${conn.queuesCreated} queues (limit ${opts.maxQueuesPerConnection})`;
  }
  return undefined;
}
