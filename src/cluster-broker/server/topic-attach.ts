/**
 * Attaching to a topic (docs/topics.md): a sender's target or a receiver's source with the
 * terminus capability `topic`, or any link to an address that already is a topic.
 *
 * - A publisher's link enqueues to the topic queue; applying the enqueue fans it out (core).
 * - A receiver's link is its subscription, a queue named after container-id and link name
 *   (`$sub/<containerId>/<linkName>`, both URI-encoded), declared before the attach is answered
 *   (a subscription exists once its attach is answered). Durable (source durable =
 *   unsettled-state, expiry-policy never): kept across detach, connection loss and restarts until
 *   a detach with closed=true. Non-durable: a temporary queue owned by the link
 *   (dynamic-nodes.ts). A re-attach with another topic, selector or durability replaces it.
 * - A subscription made by a logged-in user is that user's (docs/security.md#identity): another
 *   user attaching under the same container-id and link name is refused and changes nothing.
 */
import type { Source, Target } from '../../codec/index.js';
import type { Link } from '../../protocol/index.js';
import { DURABLE_UNSETTLED_STATE, EXPIRY_NEVER, TOPIC_CAPABILITY } from '../../wire-extensions.js';
import type { QueueOptions } from '../core/events.js';
import type { Selector } from '../selector/index.js';
import { ensureDeclared, refuseOnError } from './attach-support.js';
import type { BrokerConnection } from './broker-connection.js';
import type { LinkGone } from './dynamic-nodes.js';
import { notOwner, scopedLinkKey, withOwnerUser } from './identity.js';

/** Prefix of subscription queues (a `$`-name: never auto-created by a plain attach). */
export const SUBSCRIPTION_PREFIX = '$sub/';

/** The queue of the subscription a link (container-id + link name) holds. */
export function subscriptionQueue(containerId: string, linkName: string): string {
  return `${SUBSCRIPTION_PREFIX}${encodeURIComponent(containerId)}/${encodeURIComponent(linkName)}`;
}

/** Whether a link to `address` with this terminus attaches to a topic. */
export function isTopicAttach(conn: BrokerConnection, terminus: Source | Target, address: string): boolean {
  if (terminus.capabilities?.includes(TOPIC_CAPABILITY)) return true;
  return conn.ctx.backend.state.queueInfo(address)?.options.topic === true;
}

/** Whether a source asks for a durable subscription (the JMS-over-AMQP convention). */
function isDurable(source: Source): boolean {
  return (source.durable ?? 0) >= DURABLE_UNSETTLED_STATE && source.expiryPolicy === EXPIRY_NEVER;
}

/** A receiver's subscription, ready for its consumer link. */
export interface Subscription {
  /** The subscription's queue (the consumer link reads it). */
  queue: string;
  /** Our source in the attach reply: the topic, its capability, the durability in force. */
  terminus: Source;
  /** What to call when the link goes (a durable subscription ends on detach closed=true). */
  gone(handler: object): ((how: LinkGone) => void) | undefined;
}

/** The options a topic is declared with: its dedup window is the broker's default one. */
export function topicOptions(queueDefaults: QueueOptions | undefined): QueueOptions {
  const options: QueueOptions = { topic: true };
  if (queueDefaults?.dedupWindowCount !== undefined)
    options.dedupWindowCount = queueDefaults.dedupWindowCount;
  if (queueDefaults?.dedupWindowMs !== undefined) options.dedupWindowMs = queueDefaults.dedupWindowMs;
  return options;
}

/** Runs `then` once `topic` exists as a topic (declaring it if allowed), or refuses the link. */
export function ensureTopic(conn: BrokerConnection, link: Link, topic: string, then: () => void): void {
  const options = topicOptions(conn.ctx.opts.queueDefaults);
  ensureDeclared(conn, link, { name: topic, kind: 'topic', options }, () => {
    if (conn.ctx.backend.state.queueInfo(topic)?.options.topic === true) then();
    else link.refuse({ condition: 'amqp:not-allowed', description: `'${topic}' is a queue, not a topic` });
  });
}

/**
 * Finds or creates the subscription of this receiver link on `topic` (which exists), then runs
 * `then` with it; refuses the link when it cannot be created.
 */
export function withSubscription(
  conn: BrokerConnection,
  link: Link,
  source: Source,
  topic: string,
  selector: Selector | undefined,
  then: (sub: Subscription) => void,
): void {
  const { backend, opts, dynamicNodes } = conn.ctx;
  const durable = isDurable(source);
  const queue = subscriptionQueue(conn.containerId, link.name);
  const existing = backend.state.queueInfo(queue)?.options;
  // another user's subscription under these names: never ended, replaced or read by this link
  const refusal = notOwner(existing, conn.user, queue);
  if (refusal !== undefined) {
    link.refuse(refusal);
    return;
  }
  const owner = scopedLinkKey(conn.user, conn.containerId, link.name);
  const subscription = selector === undefined ? { topic } : { topic, selector: selector.text };
  const terminus: Source = { address: topic, capabilities: [TOPIC_CAPABILITY] };
  if (durable) {
    terminus.durable = DURABLE_UNSETTLED_STATE;
    terminus.expiryPolicy = EXPIRY_NEVER;
  }
  const sub: Subscription = {
    queue,
    terminus,
    gone: (handler) => {
      if (!durable) return dynamicNodes.attached(queue, owner, handler);
      return (how) => {
        if (how !== 'detached') return;
        backend.submit({ type: 'delete', leaderTime: backend.now(), queue }).catch((err: unknown) => {
          conn.ctx.opts.logger.warn?.({ err, queue }, 'durable subscription: delete failed');
        });
      };
    },
  };
  const proceed = (): void => {
    if (conn.closed || link.state !== 'attach-received') return;
    then(sub);
    conn.scheduleFlush();
  };
  const same =
    existing !== undefined &&
    existing.subscription?.topic === topic &&
    existing.subscription.selector === subscription.selector &&
    (existing.temporary === undefined) === durable;
  if (same) {
    then(sub);
    return;
  }
  // durable: rejected messages go to the topic's dead-letter queue; non-durable: dropped with it
  const options: QueueOptions = withOwnerUser(
    {
      ...opts.queueDefaults,
      subscription,
      deadLetterQueue: durable ? (opts.queueDefaults.deadLetterQueue ?? `${topic}.dlq`) : null,
    },
    conn.user,
  );
  const declare = (): Promise<unknown> =>
    durable
      ? backend.submit({ type: 'declare', leaderTime: backend.now(), queue, options })
      : dynamicNodes.declareOwned(queue, owner, options);
  // another topic, selector or durability under the same name: the old subscription ends
  const replaced =
    existing === undefined
      ? declare()
      : backend.submit({ type: 'delete', leaderTime: backend.now(), queue }).then(declare);
  replaced
    .then(proceed, (err: unknown) =>
      refuseOnError(conn, link, err, `cannot create the subscription '${queue}'`),
    )
    .catch((err: unknown) => conn.internalError(err));
}
