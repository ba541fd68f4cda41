/**
 * Queue administration: declare, inspect, list, purge and delete queues and topic subscriptions
 * (docs/management.md). The one home of these operations for every front end: the AMQP
 * management node (management-node.ts, which the `queues` command speaks to) and the HTTP API
 * (../http/queue-changes.ts); one per broker (BrokerServer.queueAdmin). What they may be given is
 * checked in queue-admin-checks.ts, their failures are queue-admin-errors.ts. Changes are broker
 * events committed through the backend like any other (a single node's event log, a cluster's
 * replicated log), so they are replicated, survive a restart, and apply on every member in log
 * order; reads come from the backend's applied state.
 */
import type { QueueInfo } from '../core/broker-state.js';
import type { QueueOptions } from '../core/events.js';
import { resolveQueueOptions } from '../core/queue.js';
import type { BrokerBackend } from './backend.js';
import {
  checkNewQueueName,
  checkQueueName,
  type DeclareQueueArguments,
  declaredOptions,
} from './queue-admin-checks.js';
import { QueueAdminError } from './queue-admin-errors.js';

/** A queue, topic or subscription as administration reports it. */
export interface QueueDescription {
  /** The queue's name (its address). */
  name: string;
  /** What the name is (docs/topics.md). */
  kind: 'queue' | 'topic' | 'subscription';
  /** False only for a temporary queue (a dynamic node, a non-durable subscription). */
  durable: boolean;
  /** Messages in the queue, available and acquired. */
  messageCount: number;
  /** Messages held by consumers, not settled yet. */
  acquiredCount: number;
  /** Encoded bytes of its messages. */
  bytes: number;
  /** Its message limit, when it has one. */
  maxLength?: number;
  /** Its byte limit, when it has one. */
  maxLengthBytes?: number;
  /** Its delivery limit, when it has one. */
  deliveryLimit?: number;
  /** Its dead-letter queue (null: none). */
  deadLetterQueue: string | null;
  /** A subscription's topic. */
  topic?: string;
  /** A subscription's selector. */
  selector?: string;
}

/** A topic subscription as administration reports it. */
export interface SubscriptionDescription {
  /** The subscription queue's name. */
  name: string;
  /** The topic it subscribes to. */
  topic: string;
  /** Its JMS selector, when it has one. */
  selector?: string;
  /** False for a non-durable subscription (lives while its link does). */
  durable: boolean;
  /** Messages waiting in it, acquired included. */
  messageCount: number;
}

/** What a declare did. */
export interface DeclareQueueResult {
  /** False when the queue already existed with matching arguments (nothing changed). */
  created: boolean;
  /** The queue now. */
  queue: QueueDescription;
}

/**
 * The queue administration of one broker (single node or cluster member), over its backend.
 * `queueDefaults` are the options a declared queue starts from (the broker's limits, its
 * `--delivery-limit`), as for a queue created on attach.
 */
export class QueueAdmin {
  constructor(
    private readonly backend: BrokerBackend,
    private readonly queueDefaults: QueueOptions = {},
  ) {}

  /**
   * Creates queue `name` with `args`, or, if it exists, checks that the arguments given match it
   * (a declare never changes a queue: QueueAdminError `conflict` otherwise, as RabbitMQ's 409).
   */
  async declareQueue(name: string, args: DeclareQueueArguments = {}): Promise<DeclareQueueResult> {
    checkNewQueueName(name);
    const options = declaredOptions(args, this.queueDefaults);
    const existing = this.backend.state.queueInfo(name);
    if (existing !== undefined) return { created: false, queue: matching(existing, args) };
    const result = await this.backend.submit({
      type: 'declare',
      leaderTime: this.backend.now(),
      queue: name,
      options,
    });
    const now = this.backend.state.queueInfo(name);
    if (now === undefined) throw new QueueAdminError('not-found', `queue '${name}' was deleted meanwhile`);
    // declared concurrently by someone else: their options stay, so check ours against them
    return result.created
      ? { created: true, queue: describe(now) }
      : { created: false, queue: matching(now, args) };
  }

  /** Queue `name` (QueueAdminError `not-found` when there is none). */
  getQueue(name: string): QueueDescription {
    return describe(this.info(name));
  }

  /** Every queue, topic and subscription, by name. */
  listQueues(): QueueDescription[] {
    return this.backend.state
      .listQueues()
      .map(describe)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Drops every message of queue `name` no consumer holds; acquired ones stay with their
   * consumers. Resolves with how many were dropped.
   */
  async purgeQueue(name: string): Promise<number> {
    this.info(name);
    const r = await this.backend.submit({ type: 'purge', leaderTime: this.backend.now(), queue: name });
    if (!r.found) throw new QueueAdminError('not-found', `no queue '${name}'`);
    return r.purged;
  }

  /**
   * Deletes queue `name` with its messages (acquired ones included); resolves with how many were
   * dropped. A topic with subscriptions is refused (`conflict`): delete its subscriptions first.
   */
  async deleteQueue(name: string): Promise<number> {
    const info = this.info(name);
    if (info.options.topic === true) {
      const subs = this.backend.state.subscriptionsOf(name);
      if (subs.length > 0)
        throw new QueueAdminError(
          'conflict',
          `topic '${name}' has ${subs.length} subscriptions: delete them first`,
        );
    }
    const r = await this.backend.submit({ type: 'delete', leaderTime: this.backend.now(), queue: name });
    if (!r.deleted) throw new QueueAdminError('not-found', `no queue '${name}'`);
    return r.dropped;
  }

  /** The subscriptions of `topic` (every topic's when absent), by name. */
  listSubscriptions(topic?: string): SubscriptionDescription[] {
    const out: SubscriptionDescription[] = [];
    for (const q of this.listQueues()) {
      if (q.kind !== 'subscription' || (topic !== undefined && q.topic !== topic)) continue;
      const s: SubscriptionDescription = {
        name: q.name,
        topic: q.topic!,
        durable: q.durable,
        messageCount: q.messageCount,
      };
      if (q.selector !== undefined) s.selector = q.selector;
      out.push(s);
    }
    return out;
  }

  /** Deletes subscription `name` with its messages; resolves with how many were dropped. */
  async deleteSubscription(name: string): Promise<number> {
    if (this.info(name).options.subscription === undefined)
      throw new QueueAdminError('not-found', `no subscription '${name}'`);
    return this.deleteQueue(name);
  }

  private info(name: string): QueueInfo {
    checkQueueName(name);
    const info = this.backend.state.queueInfo(name);
    if (info === undefined) throw new QueueAdminError('not-found', `no queue '${name}'`);
    return info;
  }
}

/** `existing` described, when the arguments given match it; QueueAdminError `conflict` otherwise. */
function matching(existing: QueueInfo, args: DeclareQueueArguments): QueueDescription {
  const d = describe(existing);
  const differ = (label: string, asked: unknown, has: unknown): void => {
    if (asked !== undefined && asked !== has)
      throw new QueueAdminError(
        'conflict',
        `queue '${d.name}' exists with ${label} ${String(has ?? 'none')}, not ${String(asked)}`,
      );
  };
  if (d.kind !== 'queue') throw new QueueAdminError('conflict', `'${d.name}' exists as a ${d.kind}`);
  differ('max length', args.maxLength, d.maxLength);
  differ('max length bytes', args.maxLengthBytes, d.maxLengthBytes);
  differ('delivery limit', args.deliveryLimit, d.deliveryLimit);
  differ('dead-letter queue', args.deadLetterQueue, d.deadLetterQueue);
  return d;
}

function describe(info: QueueInfo): QueueDescription {
  const o = info.options;
  const kind = o.topic ? 'topic' : o.subscription !== undefined ? 'subscription' : 'queue';
  const d: QueueDescription = {
    name: info.name,
    kind,
    durable: o.temporary === undefined,
    messageCount: info.depth,
    acquiredCount: info.acquired,
    bytes: info.bytes,
    deadLetterQueue: resolveQueueOptions(info.name, o).deadLetterQueue,
  };
  if (o.maxMessages !== undefined) d.maxLength = o.maxMessages;
  if (o.maxBytes !== undefined) d.maxLengthBytes = o.maxBytes;
  if (o.deliveryLimit !== undefined) d.deliveryLimit = o.deliveryLimit;
  if (o.subscription !== undefined) {
    d.topic = o.subscription.topic;
    if (o.subscription.selector !== undefined) d.selector = o.subscription.selector;
  }
  return d;
}
