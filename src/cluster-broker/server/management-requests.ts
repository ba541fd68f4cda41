/**
 * One management request, as RabbitMQ 4's HTTP-over-AMQP protocol has it (docs/management.md):
 * a method and a path in, a status code and an AMQP value out, answered by the queue
 * administration (queue-admin.ts). The links that carry requests and replies are in
 * management-node.ts.
 */
import { AmqpError } from '../../errors.js';
import { mapGet, QUEUE_ARGUMENTS, unwrapValue } from '../../wire-extensions.js';
import {
  type DeclareQueueArguments,
  type QueueAdmin,
  QueueAdminError,
  type QueueDescription,
} from './queue-admin.js';

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

const STATUS_OF_FAILURE = { invalid: 400, 'not-found': 404, conflict: 409 } as const;

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
  const route = parsePath(path);
  if (route === undefined) return fail(404, `no resource at '${path}'`);
  try {
    return await dispatch(admin, method, route, request.body);
  } catch (err) {
    if (err instanceof QueueAdminError) return fail(STATUS_OF_FAILURE[err.failure], err.description ?? '');
    if (err instanceof AmqpError) return fail(503, err.description ?? err.condition);
    throw err;
  }
}

type Route =
  | { kind: 'queues' }
  | { kind: 'queue'; name: string }
  | { kind: 'messages'; name: string }
  | { kind: 'subscriptions' }
  | { kind: 'subscription'; name: string };

/** Paths: `/queues`, `/queues/NAME`, `/queues/NAME/messages`, `/subscriptions`, `/subscriptions/NAME`. */
function parsePath(path: string): Route | undefined {
  const parts = path.split('/');
  if (parts[0] !== '' || parts.length < 2 || parts.length > 4) return undefined;
  let name: string | undefined;
  if (parts[2] !== undefined) {
    try {
      name = decodeURIComponent(parts[2]);
    } catch {
      return undefined;
    }
    if (name === '') return undefined;
  }
  if (parts[1] === 'queues') {
    if (name === undefined) return { kind: 'queues' };
    if (parts.length === 3) return { kind: 'queue', name };
    return parts[3] === 'messages' ? { kind: 'messages', name } : undefined;
  }
  if (parts[1] === 'subscriptions' && parts.length <= 3)
    return name === undefined ? { kind: 'subscriptions' } : { kind: 'subscription', name };
  return undefined;
}

async function dispatch(
  admin: QueueAdmin,
  method: string,
  route: Route,
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

/** A declare's body (`durable`, `exclusive`, `auto_delete`, `arguments`) as typed arguments. */
function declareArguments(body: unknown): DeclareQueueArguments {
  const args: DeclareQueueArguments = {};
  if (body === undefined || body === null) return args;
  const flag = (key: string): boolean | undefined => {
    const v = mapGet(body, key);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw new QueueAdminError('invalid', `${key} must be a boolean`);
    return v;
  };
  const durable = flag('durable');
  const exclusive = flag('exclusive');
  const autoDelete = flag('auto_delete');
  if (durable !== undefined) args.durable = durable;
  if (exclusive !== undefined) args.exclusive = exclusive;
  if (autoDelete !== undefined) args.autoDelete = autoDelete;
  const x = mapGet(body, 'arguments');
  if (x === undefined || x === null) return args;
  const count = (key: string): number | undefined => {
    const v = mapGet(x, key);
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number') throw new QueueAdminError('invalid', `${key} must be an integer`);
    return n;
  };
  const maxLength = count(QUEUE_ARGUMENTS.maxLength);
  const maxLengthBytes = count(QUEUE_ARGUMENTS.maxLengthBytes);
  const deliveryLimit = count(QUEUE_ARGUMENTS.deliveryLimit);
  if (maxLength !== undefined) args.maxLength = maxLength;
  if (maxLengthBytes !== undefined) args.maxLengthBytes = maxLengthBytes;
  if (deliveryLimit !== undefined) args.deliveryLimit = deliveryLimit;
  const dlq = mapGet(x, QUEUE_ARGUMENTS.deadLetterQueue);
  if (dlq !== undefined) {
    if (dlq !== null && typeof dlq !== 'string')
      throw new QueueAdminError('invalid', `${QUEUE_ARGUMENTS.deadLetterQueue} must be a string or null`);
    args.deadLetterQueue = dlq;
  }
  return args;
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

function subscriptionMap(s: {
  name: string;
  topic: string;
  selector?: string;
  durable: boolean;
  messageCount: number;
}) {
  const m: Record<string, unknown> = {
    name: s.name,
    topic: s.topic,
    durable: s.durable,
    message_count: s.messageCount,
  };
  if (s.selector !== undefined) m.selector = s.selector;
  return m;
}
