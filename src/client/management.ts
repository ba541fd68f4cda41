/**
 * `conn.management()`: queue management over RabbitMQ 4's HTTP-over-AMQP protocol
 * (docs/client.md#management), so the same code manages quorate-broker and RabbitMQ 4. A pair of
 * links with one name on `/management` (a pre-settled sender for requests, a receiver for
 * replies, both with the `paired` link property); each request has a fresh message-id, `to` =
 * the path, `subject` = the method, `reply-to` = `$me`; the reply whose correlation-id matches
 * carries the status code as its `subject`.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../codec/message.js';
import { ManagementError } from '../errors.js';
import {
  HTTP_REQUEST_PROPERTY,
  HTTP_VERSION,
  MANAGEMENT_REPLY_TO,
  mapGet,
  QUEUE_ARGUMENTS,
  QUEUES_PATH,
  unwrapValue,
} from '../wire-extensions.js';
import type { Receiver, Sender } from './api.js';
import { ReplyRouter } from './request-reply.js';
import type { CallOptions } from './types.js';

/** What {@link Management.declareQueue} asks for (RabbitMQ's queue arguments, typed). */
export interface DeclareQueueOptions {
  /** Default true. quorate-broker keeps every queue durable and refuses false. */
  durable?: boolean;
  /** Default false. quorate-broker refuses true. */
  exclusive?: boolean;
  /** Default false. quorate-broker refuses true. */
  autoDelete?: boolean;
  /** `x-max-length`: enqueues beyond this many messages are refused. */
  maxLength?: number;
  /** `x-max-length-bytes`: enqueues beyond this many bytes are refused. */
  maxLengthBytes?: number;
  /** `x-delivery-limit`: a message delivered this many times is dead-lettered. */
  deliveryLimit?: number;
  /**
   * Other arguments, sent as given (e.g. `x-queue-type` for RabbitMQ); the typed options above
   * take precedence.
   */
  arguments?: Record<string, string | number | boolean | null>;
}

/** A queue as the broker describes it. */
export interface ManagementQueueInfo {
  /** The queue's name. */
  name: string;
  /** Whether it survives a broker restart. */
  durable: boolean;
  /** RabbitMQ's auto-delete flag. */
  autoDelete: boolean;
  /** RabbitMQ's exclusive flag. */
  exclusive: boolean;
  /** The queue type the broker reports (`quorum`, `classic`, `stream`). */
  type: string | undefined;
  /** Its arguments (`x-max-length`, `x-delivery-limit`, ...), numbers as numbers. */
  arguments: Record<string, unknown>;
  /** Messages in the queue. */
  messageCount: number;
  /** Consumers, where the broker reports them (RabbitMQ does; quorate-broker does not). */
  consumerCount: number | undefined;
}

/** Queue management over one connection, from {@link Connection.management}. */
export interface Management extends AsyncDisposable {
  /**
   * Declares queue `name` (PUT /queues/NAME): resolves with the queue, created or found with the
   * same arguments; ManagementError 409 when it exists with other arguments.
   */
  declareQueue(name: string, options?: DeclareQueueOptions, call?: CallOptions): Promise<ManagementQueueInfo>;
  /** The queue (GET /queues/NAME); ManagementError 404 when there is none. */
  getQueue(name: string, call?: CallOptions): Promise<ManagementQueueInfo>;
  /**
   * Every queue (GET /queues): quorate-broker's extension of the protocol; RabbitMQ answers it
   * with an error status (ManagementError).
   */
  listQueues(call?: CallOptions): Promise<ManagementQueueInfo[]>;
  /** Drops the queue's messages (DELETE /queues/NAME/messages); resolves with how many. */
  purgeQueue(name: string, call?: CallOptions): Promise<number>;
  /** Deletes the queue (DELETE /queues/NAME); resolves with how many messages it held. */
  deleteQueue(name: string, call?: CallOptions): Promise<number>;
  /** Closes the link pair; pending requests reject with ClientError 'quorate:closed'. */
  close(): Promise<void>;
}

/** @internal the link pair, opened by the connection. */
export class ManagementClient implements Management {
  private readonly router: ReplyRouter;

  constructor(sender: Sender, receiver: Receiver) {
    this.router = new ReplyRouter(sender, receiver, { request: 'management request', owner: 'management' });
  }

  async declareQueue(
    name: string,
    options: DeclareQueueOptions = {},
    call?: CallOptions,
  ): Promise<ManagementQueueInfo> {
    const args: Record<string, unknown> = { ...options.arguments };
    if (options.maxLength !== undefined) args[QUEUE_ARGUMENTS.maxLength] = options.maxLength;
    if (options.maxLengthBytes !== undefined) args[QUEUE_ARGUMENTS.maxLengthBytes] = options.maxLengthBytes;
    if (options.deliveryLimit !== undefined) args[QUEUE_ARGUMENTS.deliveryLimit] = options.deliveryLimit;
    const body = {
      durable: options.durable ?? true,
      exclusive: options.exclusive ?? false,
      auto_delete: options.autoDelete ?? false,
      arguments: args,
    };
    return queueInfo(await this.request('PUT', queuePath(name), body, call));
  }

  async getQueue(name: string, call?: CallOptions): Promise<ManagementQueueInfo> {
    return queueInfo(await this.request('GET', queuePath(name), undefined, call));
  }

  async listQueues(call?: CallOptions): Promise<ManagementQueueInfo[]> {
    const body = unwrapValue(await this.request('GET', '/queues', undefined, call));
    if (!Array.isArray(body)) throw new ManagementError(200, 'GET /queues: the reply is not a list');
    return body.map(queueInfo);
  }

  async purgeQueue(name: string, call?: CallOptions): Promise<number> {
    return messageCount(await this.request('DELETE', `${queuePath(name)}/messages`, undefined, call));
  }

  async deleteQueue(name: string, call?: CallOptions): Promise<number> {
    return messageCount(await this.request('DELETE', queuePath(name), undefined, call));
  }

  close(): Promise<void> {
    return this.router.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Sends one request; resolves with the reply body of a 2xx status, ManagementError otherwise. */
  private async request(method: string, path: string, body: unknown, call?: CallOptions): Promise<unknown> {
    const message: Message & { messageId: string } = {
      messageId: randomUUID(),
      to: path,
      subject: method,
      replyTo: MANAGEMENT_REPLY_TO,
      applicationProperties: { [HTTP_REQUEST_PROPERTY]: HTTP_VERSION },
    };
    if (body !== undefined) message.body = body as Message['body'];
    const answer = (await this.router.request(message, call)).message;
    const status = Number(unwrapValue(answer.subject));
    if (!Number.isInteger(status) || status < 200 || status > 299) {
      const text = unwrapValue(answer.body);
      const description =
        typeof text === 'string' ? text : `${method} ${path}: status ${String(answer.subject)}`;
      throw new ManagementError(Number.isInteger(status) ? status : 0, description);
    }
    return answer.body;
  }
}

/** The v2 path of a queue (RabbitMQ: the name percent-encoded). */
function queuePath(name: string): string {
  return `${QUEUES_PATH}${encodeURIComponent(name)}`;
}

function asNumber(v: unknown): number | undefined {
  const u = unwrapValue(v);
  if (typeof u === 'number') return u;
  if (typeof u === 'bigint') return Number(u);
  return undefined;
}

function messageCount(body: unknown): number {
  return asNumber(mapGet(body, 'message_count')) ?? 0;
}

function queueInfo(body: unknown): ManagementQueueInfo {
  const name = mapGet(body, 'name');
  if (typeof name !== 'string') throw new ManagementError(200, 'the reply does not describe a queue');
  const rawArgs = unwrapValue(mapGet(body, 'arguments'));
  const args: Record<string, unknown> = {};
  const entries: Iterable<[unknown, unknown]> =
    rawArgs instanceof Map
      ? rawArgs
      : typeof rawArgs === 'object' && rawArgs !== null
        ? Object.entries(rawArgs)
        : [];
  for (const [k, v] of entries) args[String(unwrapValue(k))] = asNumber(v) ?? unwrapValue(v);
  const type = mapGet(body, 'type');
  return {
    name,
    durable: mapGet(body, 'durable') === true,
    autoDelete: mapGet(body, 'auto_delete') === true,
    exclusive: mapGet(body, 'exclusive') === true,
    type: typeof type === 'string' ? type : undefined,
    arguments: args,
    messageCount: messageCount(body),
    consumerCount: asNumber(mapGet(body, 'consumer_count')),
  };
}
