/**
 * One management request, as RabbitMQ 4's HTTP-over-AMQP protocol has it (docs/management.md):
 * a method and a path in, a status code and an AMQP value out, answered by the queue
 * administration (queue-admin.ts). The links that carry requests and replies are in
 * management-node.ts.
 */
import { mapGet, QUEUE_ARGUMENTS, unwrapValue } from '../../wire-extensions.js';
import { type ManagementRoute, parseManagementPath } from './management-paths.js';
import type { QueueAdmin, QueueDescription, SubscriptionDescription } from './queue-admin.js';
import {
  type DeclareArgument,
  type DeclareQueueArguments,
  declareArgumentsFrom,
} from './queue-admin-checks.js';
import { statusOfAdminError } from './queue-admin-errors.js';

/** A request as it arrived: `subject` (the method), `to` (the path), the body (an AMQP value). */
export interface ManagementRequest {
  method: unknown;
  path: unknown;
  body: unknown;
}

/** The reply: its status code (the reply's `subject`) and body. */
export interface ManagementReply {
  status: number;
  body: unknown;
}

/**
 * Answers `request` with `admin`. `mayManage`: the connection's user holds the management grant
 * (docs/management.md#grant); without it every request is answered 403. Never rejects: a failed
 * commit (not serving, outcome unknown) is answered 503 with the reason.
 */
export async function answerManagementRequest(
  admin: QueueAdmin,
  request: ManagementRequest,
  mayManage: boolean,
): Promise<ManagementReply> {
  if (!mayManage) return fail(403, 'this user has no management grant');
  const method = unwrapValue(request.method);
  const path = unwrapValue(request.path);
  if (typeof method !== 'string' || typeof path !== 'string')
    return fail(400, 'a request needs subject (the method) and to (the path)');
  const route = parseManagementPath(path);
  if (route.kind === 'bad') return fail(404, route.reason);
  try {
    return await dispatch(admin, method, route, request.body);
  } catch (err) {
    const failed = statusOfAdminError(err);
    if (failed === undefined) throw err;
    return fail(failed.status, failed.reason);
  }
}

async function dispatch(
  admin: QueueAdmin,
  method: string,
  route: Exclude<ManagementRoute, { kind: 'bad' }>,
  body: unknown,
): Promise<ManagementReply> {
  switch (route.kind) {
    case 'queues':
      if (method === 'GET') return { status: 200, body: admin.listQueues().map(queueMap) };
      break;
    case 'queue':
      if (method === 'GET') return { status: 200, body: queueMap(admin.getQueue(route.name)) };
      if (method === 'PUT') {
        const r = await admin.declareQueue(route.name, declareArguments(body));
        return { status: r.created ? 201 : 200, body: queueMap(r.queue) };
      }
      if (method === 'DELETE')
        return { status: 200, body: { message_count: await admin.deleteQueue(route.name) } };
      break;
    case 'messages':
      if (method === 'DELETE')
        return { status: 200, body: { message_count: await admin.purgeQueue(route.name) } };
      break;
    case 'subscriptions':
      if (method === 'GET') return { status: 200, body: admin.listSubscriptions().map(subscriptionMap) };
      break;
    case 'subscription':
      if (method === 'DELETE')
        return { status: 200, body: { message_count: await admin.deleteSubscription(route.name) } };
      break;
  }
  return fail(405, `method ${method} is not allowed here`);
}

function fail(status: number, description: string): ManagementReply {
  return { status, body: description };
}

/** Where a request's body carries each declare argument: RabbitMQ's flags, and its `arguments` map. */
const AMQP_KEYS: Record<DeclareArgument, readonly [where: 'body' | 'arguments', key: string]> = {
  durable: ['body', 'durable'],
  exclusive: ['body', 'exclusive'],
  autoDelete: ['body', 'auto_delete'],
  maxLength: ['arguments', QUEUE_ARGUMENTS.maxLength],
  maxLengthBytes: ['arguments', QUEUE_ARGUMENTS.maxLengthBytes],
  deliveryLimit: ['arguments', QUEUE_ARGUMENTS.deliveryLimit],
  deadLetterQueue: ['arguments', QUEUE_ARGUMENTS.deadLetterQueue],
};

/** A declare's body (`durable`, `exclusive`, `auto_delete`, `arguments`) as typed arguments. */
function declareArguments(body: unknown): DeclareQueueArguments {
  const x = mapGet(body, 'arguments');
  return declareArgumentsFrom(
    (argument) => {
      const [where, key] = AMQP_KEYS[argument];
      const v = mapGet(where === 'body' ? body : x, key);
      // null is "not given", but for the dead-letter queue, where it means none
      if (v === null && argument !== 'deadLetterQueue') return undefined;
      return typeof v === 'bigint' ? Number(v) : v;
    },
    (argument) => AMQP_KEYS[argument][1],
  );
}

/** A queue as RabbitMQ's GET /queues/NAME answers it, plus our `kind` (and a subscription's topic). */
function queueMap(q: QueueDescription): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  if (q.maxLength !== undefined) args[QUEUE_ARGUMENTS.maxLength] = q.maxLength;
  if (q.maxLengthBytes !== undefined) args[QUEUE_ARGUMENTS.maxLengthBytes] = q.maxLengthBytes;
  if (q.deliveryLimit !== undefined) args[QUEUE_ARGUMENTS.deliveryLimit] = q.deliveryLimit;
  args[QUEUE_ARGUMENTS.deadLetterQueue] = q.deadLetterQueue;
  const m: Record<string, unknown> = {
    name: q.name,
    durable: q.durable,
    auto_delete: false,
    exclusive: false,
    type: 'quorum',
    arguments: args,
    message_count: q.messageCount,
    kind: q.kind,
  };
  if (q.topic !== undefined) m.topic = q.topic;
  return m;
}

function subscriptionMap(s: SubscriptionDescription): Record<string, unknown> {
  const m: Record<string, unknown> = {
    name: s.name,
    topic: s.topic,
    durable: s.durable,
    message_count: s.messageCount,
  };
  if (s.selector !== undefined) m.selector = s.selector;
  return m;
}
