/**
 * Answering a peer's attach: a publisher link to a queue, a topic, a dynamic node or an anonymous
 * relay (our receiver), a consumer link from a queue, a topic subscription (topic-attach.ts), a
 * dynamic node or a virtual source (our sender), or a refusal with the narrowest condition.
 */
import type { Attach, Fields, Source, Target } from '../../codec/index.js';
import {
  filterEntries,
  isSelectorFilter,
  type Link,
  type ReceiverLink,
  SELECTOR_FILTER,
  type SenderLink,
} from '../../protocol/index.js';
import { DEDUP_CAPABILITY, HOLD_UNSETTLED_CAPABILITY, TOPIC_CAPABILITY } from '../../wire-extensions.js';
import { Selector, SelectorError } from '../selector/index.js';
import { ensureDeclared, notPermitted, queueOfAddress, refuseOnError } from './attach-support.js';
import type { BrokerConnection } from './broker-connection.js';
import { BrowserLink } from './browser-link.js';
import { ConsumerLink, HOLD_UNSETTLED_MS } from './consumer-link.js';
import { type LinkGone, lifetimePolicyOf } from './dynamic-nodes.js';
import { notOwner, scopedLinkKey } from './identity.js';
import { attachManagementReplies, attachManagementRequests, isManagementAddress } from './management-node.js';
import { PublisherLink } from './publisher-link.js';
import { ensureTopic, isTopicAttach, type Subscription, withSubscription } from './topic-attach.js';
import { CoordinatorLink } from './transactions.js';
import { VirtualLink } from './virtual-link.js';

/** The coordinator capability we offer: local transactions (no distributed ones). */
const LOCAL_TRANSACTIONS = 'amqp:local-transactions';
/** Outcomes our sources support (symbols). */
const OUTCOMES = ['amqp:accepted:list', 'amqp:rejected:list', 'amqp:released:list', 'amqp:modified:list'];
/** Source distribution modes (spec 3.5.3 std-dist-mode): a consumer takes, a browser copies. */
const MOVE = 'move';
const COPY = 'copy';
/** Delivery contract 8: sources advertise modified{delivery-failed}. */
const DEFAULT_OUTCOME_STATE = { type: 'modified', deliveryFailed: true } as const;

export function attachPublisher(conn: BrokerConnection, link: ReceiverLink, attach: Attach): void {
  const target = attach.target;
  if (target === undefined) {
    link.refuse({ condition: 'amqp:invalid-field', description: 'a target is required' });
    return;
  }
  if ('coordinator' in target) {
    const h = new CoordinatorLink(conn, link);
    link.context = h;
    conn.addHandler(h);
    link.accept({
      source: peerSource(attach),
      target: { coordinator: true, capabilities: [LOCAL_TRANSACTIONS] },
    });
    h.start();
    return;
  }
  const t = target as Target;
  // duplicate detection only for senders that ask for it, in the attach's desired-capabilities or
  // the target's capabilities (what Proton can set), or on every queue with --dedup
  const dedup =
    conn.ctx.opts.dedup ||
    attach.desiredCapabilities?.includes(DEDUP_CAPABILITY) === true ||
    t.capabilities?.includes(DEDUP_CAPABILITY) === true;
  const accept = (address: string | undefined, topic = false): void => {
    const h = new PublisherLink(conn, link, address, dedup);
    link.context = h;
    conn.addHandler(h, address === undefined ? undefined : dynamicGone(conn, link, address, h));
    const target = replyTerminus(t, address);
    const capabilities = [...(topic ? [TOPIC_CAPABILITY] : []), ...(dedup ? [DEDUP_CAPABILITY] : [])];
    if (capabilities.length > 0) target.capabilities = capabilities;
    link.accept({
      source: peerSource(attach),
      target,
      sndSettleMode: attach.sndSettleMode === 0 || attach.sndSettleMode === 1 ? attach.sndSettleMode : 2,
      rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
      maxMessageSize: conn.ctx.opts.maxMessageSize,
      ...(dedup ? { offeredCapabilities: [DEDUP_CAPABILITY] } : {}),
    });
    h.start();
  };
  if (t.dynamic) {
    withDynamicNode(conn, link, t.dynamicNodeProperties, accept);
    return;
  }
  if (t.address === undefined || t.address === null) {
    // anonymous relay (offered in our Open): each message goes to the queue its `to` names
    accept(undefined);
    return;
  }
  if (isManagementAddress(t.address)) {
    attachManagementRequests(conn, link, attach);
    return;
  }
  const address = queueAddress(link, t.address);
  if (address === undefined) return;
  if (!allowed(conn, link, 'send', address)) return;
  if (isTopicAttach(conn, t, address)) ensureTopic(conn, link, address, () => accept(address, true));
  else ensureQueue(conn, link, address, () => accept(address));
}

export function attachConsumer(conn: BrokerConnection, link: SenderLink, attach: Attach): void {
  const source = attach.source;
  if (source === undefined) {
    link.refuse({ condition: 'amqp:invalid-field', description: 'a source is required' });
    return;
  }
  const filter = sourceFilter(source.filter);
  if ('refused' in filter) {
    link.refuse(filter.refused);
    return;
  }
  const presettled = attach.sndSettleMode === 1;
  // held unsettled: only for receivers that ask (a pre-settled link holds nothing unsettled)
  const hold = !presettled && attach.desiredCapabilities?.includes(HOLD_UNSETTLED_CAPABILITY) === true;
  // distribution-mode copy: a browser, sent copies, acquiring nothing (docs/broker-features.md#browsing)
  const browse = source.distributionMode === COPY;
  /** `sub`: a topic subscription (its selector is applied when a publish fans out, not here). */
  const accept = (address: string, sub?: Subscription): void => {
    const selector = sub ? undefined : filter.selector;
    const h = browse
      ? new BrowserLink(conn, link, address, presettled, selector)
      : new ConsumerLink(conn, link, address, presettled, selector, hold ? HOLD_UNSETTLED_MS : 0);
    link.context = h;
    conn.addHandler(h, sub ? sub.gone(h) : dynamicGone(conn, link, address, h));
    const replySource: Source = {
      ...(sub ? sub.terminus : replyTerminus(source, address)),
      defaultOutcome: DEFAULT_OUTCOME_STATE,
      outcomes: OUTCOMES,
      // the mode actually used (spec 3.5.3): copy for a browser, else move
      distributionMode: browse ? COPY : MOVE,
    };
    // the filters in force (spec 3.5.3: the receiver learns which were applied)
    if (filter.inForce) replySource.filter = filter.inForce;
    link.accept({
      source: replySource,
      target: peerTarget(attach),
      sndSettleMode: presettled ? 1 : attach.sndSettleMode === 0 ? 0 : 2,
      rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
      ...(hold && !browse ? { offeredCapabilities: [HOLD_UNSETTLED_CAPABILITY] } : {}),
    });
    h.start();
  };
  if (source.dynamic) {
    withDynamicNode(conn, link, source.dynamicNodeProperties, (queue) => accept(queue));
    return;
  }
  if (isManagementAddress(source.address)) {
    attachManagementReplies(conn, link, attach);
    return;
  }
  const address = queueAddress(link, source.address);
  if (address === undefined) return;
  if (!allowed(conn, link, 'receive', address)) return;
  const virtual = conn.ctx.opts.virtualSources.get(address);
  if (virtual !== undefined && filter.selector !== undefined) {
    link.refuse({ condition: 'amqp:not-implemented', description: `no filters on ${address}` });
    return;
  }
  if (virtual !== undefined) {
    const h = new VirtualLink(conn, link);
    link.context = h;
    conn.addHandler(h);
    link.accept({
      source: { address: address },
      target: peerTarget(attach),
      sndSettleMode: 1,
      rcvSettleMode: 0,
    });
    h.start(virtual, address);
    return;
  }
  if (isTopicAttach(conn, source, address)) {
    ensureTopic(conn, link, address, () =>
      withSubscription(conn, link, source, address, filter.selector, (sub) => accept(sub.queue, sub)),
    );
    return;
  }
  ensureQueue(conn, link, address, () => accept(address));
}

/** The queue a link's address names (queueOfAddress), or undefined when it refused the link. */
function queueAddress(link: Link, asked: unknown): string | undefined {
  const named = queueOfAddress(asked);
  if (typeof named === 'string') return named;
  link.refuse({ condition: 'amqp:invalid-field', description: named.why });
  return undefined;
}

/**
 * The peer's own terminus, echoed in our answering attach: spec 2.6.3 reads a null terminus there
 * as "not created" (a refusal, detach to follow), so an accepted link carries both (a peer that
 * sent none gets an empty one).
 */
function peerSource(attach: Attach): Source {
  return attach.source ?? {};
}

function peerTarget(attach: Attach): Target {
  const t = attach.target;
  return t === undefined || 'coordinator' in t ? {} : (t as Target);
}

/** Our terminus in the attach reply: the address in force; a dynamic one says it is dynamic. */
function replyTerminus<T extends Source | Target>(asked: T, address: string | undefined): T {
  const out = (address === undefined ? {} : { address }) as T;
  if (asked.dynamic) {
    out.dynamic = true;
    if (asked.dynamicNodeProperties) out.dynamicNodeProperties = asked.dynamicNodeProperties;
  }
  return out;
}

/** What a link handler on `queue` tells the dynamic-node registry when it goes (nothing for a plain queue). */
function dynamicGone(
  conn: BrokerConnection,
  link: Link,
  queue: string,
  handler: object,
): ((how: LinkGone) => void) | undefined {
  return conn.ctx.dynamicNodes.attached(
    queue,
    scopedLinkKey(conn.user, conn.containerId, link.name),
    handler,
  );
}

/** Creates (or finds again, for a re-attaching owner) the link's dynamic node, then runs `then`. */
function withDynamicNode(
  conn: BrokerConnection,
  link: Link,
  props: Fields | undefined,
  then: (queue: string) => void,
): void {
  const policy = lifetimePolicyOf(props);
  if (policy === undefined) {
    link.refuse({
      condition: 'amqp:invalid-field',
      description: 'unsupported lifetime-policy in dynamic-node-properties',
    });
    return;
  }
  const { dynamicNodes, opts } = conn.ctx;
  dynamicNodes
    .create(scopedLinkKey(conn.user, conn.containerId, link.name), policy, opts.queueDefaults, conn.user)
    .then(
      (queue) => {
        if (conn.closed || link.state !== 'attach-received') return;
        then(queue);
        conn.scheduleFlush();
      },
      (err: unknown) => refuseOnError(conn, link, err, 'cannot create a dynamic node'),
    )
    .catch((err: unknown) => conn.internalError(err));
}

/** Runs `then` once `queue` exists (declaring it if allowed), or refuses the link. */
function ensureQueue(conn: BrokerConnection, link: Link, queue: string, then: () => void): void {
  ensureDeclared(conn, link, { name: queue, kind: 'queue', options: conn.ctx.opts.queueDefaults }, then);
}

/**
 * The source's filter set: a JMS selector (compiled), the entries in force for the reply, or why
 * the attach is refused (a filter type we do not implement; a malformed selector).
 */
function sourceFilter(
  filter: unknown,
): { selector?: Selector; inForce?: Fields } | { refused: { condition: string; description: string } } {
  const entries = filterEntries(filter);
  if (entries.length === 0) return {};
  const inForce: Fields = {};
  let selector: Selector | undefined;
  for (const entry of entries) {
    if (!isSelectorFilter(entry)) {
      const what = entry.descriptor === undefined ? 'an undescribed value' : String(entry.descriptor);
      return {
        refused: {
          condition: 'amqp:not-implemented',
          description: `filter '${entry.key}' (${what}) is not supported; supported: ${SELECTOR_FILTER}`,
        },
      };
    }
    if (selector !== undefined || typeof entry.value !== 'string') {
      return {
        refused: {
          condition: 'amqp:invalid-field',
          description: selector
            ? 'more than one selector filter'
            : 'a selector filter value must be a string',
        },
      };
    }
    try {
      selector = new Selector(entry.value);
    } catch (err) {
      if (!(err instanceof SelectorError)) throw err;
      return { refused: { condition: err.condition, description: err.description } };
    }
    inForce[entry.key] = entry.raw;
  }
  return selector ? { selector, inForce } : {};
}

/**
 * Whether the connection's user may attach this way to `address` (permissions.ts) and, to receive,
 * whether the node is not another user's (docs/security.md#identity); refuses the link with
 * amqp:unauthorized-access when not. The connection stays open.
 */
function allowed(
  conn: BrokerConnection,
  link: Link,
  direction: 'send' | 'receive',
  address: string,
): boolean {
  const refusal =
    notPermitted(conn, direction, address) ??
    (direction === 'receive'
      ? notOwner(conn.ctx.backend.state.queueInfo(address)?.options, conn.user, address)
      : undefined);
  if (refusal === undefined) return true;
  conn.ctx.opts.logger.info?.(
    { user: conn.user, address, direction, condition: refusal.condition },
    'attach refused: not permitted',
  );
  link.refuse(refusal);
  return false;
}
