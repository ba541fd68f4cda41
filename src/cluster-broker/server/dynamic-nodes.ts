/**
 * Temporary queues: dynamic nodes (AMQP 1.0 part 3, 3.5.3 and 3.5.10) and non-durable topic
 * subscriptions (docs/topics.md), one lifetime mechanism for both (docs/topics.md#owner-gone).
 *
 * - A link attached with a `dynamic` source or target gets a broker-named temporary queue,
 *   `$temp/<uuid>`; a non-durable subscription is a temporary queue named after its link. Both
 *   are ordinary queues in the replicated state; their options record the owner
 *   (`containerId/linkName` of the link that asked for it) and the lifetime policy, so any member
 *   recognises the owner re-attaching.
 * - Lifetime policies: `delete-on-close` (the default, as the spec says for dynamic nodes; always
 *   for a subscription): deleted when the owner's link closes; `delete-on-no-links`: deleted when
 *   no link to it is left. `delete-on-no-messages` and `delete-on-no-links-or-messages` are
 *   honoured as `delete-on-no-links` (a node is never deleted under an attached link).
 * - A detach with closed=true or a clean connection Close deletes at once. A link that is lost
 *   (socket gone, member stopped serving, detach without closed) starts the re-attach grace
 *   period instead, IN THE REPLICATED STATE: an `owner-lost` event. So does the death of the
 *   member holding the owner link: every link attach that keeps a node alive records its process
 *   (`owner-attached`), and the cluster's release-owner of a dead or restarted member marks the
 *   nodes that process held as owner-lost. Every member sweeps the owner records and deletes a
 *   node whose grace period passed with `delete { ifOwnerLostAt }`, void if the owner re-attached
 *   meanwhile (on any member: its owner-attached comes first in the log).
 * - `$`-names are never auto-created, so a reply sent to a deleted node is refused (not-found)
 *   instead of re-creating a queue nobody will ever read.
 */
import { randomUUID } from 'node:crypto';
import type { AmqpValue, Fields } from '../../codec/index.js';
import { sharedInterval } from '../../common/shared-interval.js';
import type { LifetimePolicy, QueueOptions } from '../core/events.js';
import type { BrokerBackend } from './backend.js';
import { withOwnerUser } from './identity.js';
import type { BrokerLogger } from './options.js';

export const TEMP_QUEUE_PREFIX = '$temp/';
/** How long a temporary queue outlives its owner's lost link, waiting for a re-attach. */
export const DEFAULT_DYNAMIC_GRACE_MS = 30_000;
/** The owner-record holder of a single node (a cluster member uses its `<member>@<incarnation>`). */
const SINGLE_NODE_HOLDER = 'local';

/**
 * How a link went away: `detached` = the client detached it with closed=true (a durable
 * subscription ends); `closed` = its session ended or the client closed the connection cleanly;
 * `lost` = anything that may be a failover (socket gone, detach without closed) or that the
 * client did not decide (its closing answer to our own detach: amqp:link:stolen, or a link error
 * of ours), so a temporary node no link holds any more waits out the grace period.
 */
export type LinkGone = 'detached' | 'closed' | 'lost';

const POLICY_BY_CODE = new Map<number | string, LifetimePolicy>([
  [0x2b, 'delete-on-close'],
  [0x2c, 'delete-on-no-links'],
  [0x2d, 'delete-on-no-messages'],
  [0x2e, 'delete-on-no-links-or-messages'],
  ['amqp:delete-on-close:list', 'delete-on-close'],
  ['amqp:delete-on-no-links:list', 'delete-on-no-links'],
  ['amqp:delete-on-no-messages:list', 'delete-on-no-messages'],
  ['amqp:delete-on-no-links-or-messages:list', 'delete-on-no-links-or-messages'],
]);

/**
 * The lifetime policy asked for in dynamic-node-properties (`lifetime-policy`), `delete-on-close`
 * when absent; undefined when the value is not one of the four policies.
 */
export function lifetimePolicyOf(props: Fields | undefined): LifetimePolicy | undefined {
  const v = props?.['lifetime-policy'];
  if (v === undefined || v === null) return 'delete-on-close';
  const descriptor = (v as { descriptor?: unknown }).descriptor as AmqpValue;
  const key = unwrap(descriptor);
  return key === undefined ? undefined : POLICY_BY_CODE.get(key);
}

function unwrap(v: AmqpValue): number | string | undefined {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object' && v !== null && 'value' in v) return unwrap((v as { value: AmqpValue }).value);
  return undefined;
}

interface DynamicNode {
  queue: string;
  owner: string;
  policy: LifetimePolicy;
  /** Links attached to it here (handler identity -> link key), the owner's included. */
  links: Map<object, string>;
}

export class DynamicNodes {
  private readonly nodes = new Map<string, DynamicNode>();
  private readonly byOwner = new Map<string, DynamicNode>();
  private closed = false;
  private readonly stopSweeper: () => void;
  /** `<queue>@<ownerLostAt>` of the grace-period deletes this process already submitted. */
  private readonly deleting = new Set<string>();
  private readonly holder: string;

  constructor(
    private readonly backend: BrokerBackend,
    private readonly logger: BrokerLogger,
    private readonly graceMs = DEFAULT_DYNAMIC_GRACE_MS,
  ) {
    this.holder = backend.origin ?? SINGLE_NODE_HOLDER;
    // a quarter of the grace period late at most, and never busier than every 20 ms
    this.stopSweeper = sharedInterval(Math.min(1_000, Math.max(20, graceMs / 4)), () => this.sweep(), {
      ref: false,
    });
  }

  static isTemporary(address: string): boolean {
    return address.startsWith(TEMP_QUEUE_PREFIX);
  }

  /**
   * A non-durable subscription's queue (docs/topics.md#subscriptions): declared with its owner
   * record, like a dynamic node, and resolved once the declare committed.
   */
  async declareOwned(queue: string, owner: string, options: QueueOptions): Promise<void> {
    await this.backend.submit({
      type: 'declare',
      leaderTime: this.backend.now(),
      queue,
      options: { ...options, temporary: { owner, policy: 'delete-on-close' } },
    });
  }

  /**
   * The node for a dynamic attach by `owner` (a user-scoped link key, identity.ts): the one it
   * already has (re-attach within the grace period), or a new queue declared with `queueDefaults`
   * and the owner user `user` (committed when this resolves).
   */
  async create(
    owner: string,
    policy: LifetimePolicy,
    queueDefaults: QueueOptions,
    user: string | undefined,
  ): Promise<string> {
    const existing = this.byOwner.get(owner);
    if (existing && this.backend.state.hasQueue(existing.queue)) return existing.queue;
    const queue = `${TEMP_QUEUE_PREFIX}${randomUUID()}`;
    await this.backend.submit({
      type: 'declare',
      leaderTime: this.backend.now(),
      queue,
      // nothing outlives a temporary queue: its rejected messages are dropped with it
      options: withOwnerUser({ ...queueDefaults, deadLetterQueue: null, temporary: { owner, policy } }, user),
    });
    return queue;
  }

  /**
   * A link (`handler`, key `linkKey`) attached to `queue`. Returns what to call when it goes, or
   * undefined when `queue` is not a dynamic node.
   */
  attached(queue: string, linkKey: string, handler: object): ((how: LinkGone) => void) | undefined {
    if (this.closed) return undefined;
    let node = this.nodes.get(queue);
    if (!node) {
      // declared by another member (or before this process started): adopt it here
      const temporary = this.backend.state.queueInfo(queue)?.options.temporary;
      if (!temporary) return undefined;
      node = { queue, owner: temporary.owner, policy: temporary.policy, links: new Map() };
      this.nodes.set(queue, node);
      this.byOwner.set(node.owner, node);
    }
    if (linkKey === node.owner || node.policy !== 'delete-on-close') this.record('owner-attached', node);
    node.links.set(handler, linkKey);
    const n = node;
    return (how) => this.detached(n, linkKey, handler, how);
  }

  /** Cluster: the link `linkKey` attached on another member; a node it owns is cared for there. */
  ownerMoved(linkKey: string): void {
    const node = this.byOwner.get(linkKey);
    if (!node || node.links.size > 0) return;
    this.forget(node);
  }

  /** Stops sweeping (the server is stopping: the nodes and their owner records stay in the store). */
  close(): void {
    this.closed = true;
    this.stopSweeper();
    this.nodes.clear();
    this.byOwner.clear();
  }

  /**
   * Single node at start: no connection survived the restart, so every dynamic node is an
   * orphan; delete them all.
   */
  async deleteOrphans(): Promise<void> {
    for (const q of this.backend.state.listQueues()) {
      if (q.options.temporary === undefined) continue;
      await this.backend.submit({ type: 'delete', leaderTime: this.backend.now(), queue: q.name });
    }
  }

  private detached(node: DynamicNode, linkKey: string, handler: object, how: LinkGone): void {
    if (!node.links.delete(handler) || this.closed) return;
    // the owner re-attached (failover) before its old link's loss was noticed: not gone
    const ownerGone = linkKey === node.owner && ![...node.links.values()].includes(node.owner);
    const due = node.policy === 'delete-on-close' ? ownerGone : node.links.size === 0;
    if (!due) return;
    if (how === 'lost') this.record('owner-lost', node);
    else this.delete(node);
  }

  /** Replicates where the node's owner is (or that it is lost, from now on). */
  private record(type: 'owner-attached' | 'owner-lost', node: DynamicNode): void {
    this.backend
      .submit({ type, leaderTime: this.backend.now(), queue: node.queue, holder: this.holder })
      .catch((err: unknown) => {
        // not quorate: the member's release-owner, once it serves again, marks what it held
        this.logger.debug?.({ err, queue: node.queue }, `temporary queue: ${type} not committed`);
      });
  }

  /** Deletes every temporary queue whose owner stayed lost for the whole grace period. */
  private sweep(): void {
    if (this.closed || !this.backend.serving) return;
    const now = this.backend.now();
    const lost = new Set<string>();
    for (const o of this.backend.state.ownedQueues()) {
      if (o.ownerLostAt === undefined) continue;
      const key = `${o.queue}@${o.ownerLostAt}`;
      lost.add(key);
      if (now - o.ownerLostAt < this.graceMs || this.deleting.has(key)) continue;
      this.deleting.add(key);
      const queue = o.queue;
      this.backend.submit({ type: 'delete', leaderTime: now, queue, ifOwnerLostAt: o.ownerLostAt }).then(
        (r) => {
          if (r.deleted)
            this.logger.info?.({ queue }, 'temporary queue deleted: its owner did not come back');
        },
        (err: unknown) => {
          this.deleting.delete(key);
          this.logger.warn?.({ err, queue }, 'temporary queue: delete failed');
        },
      );
    }
    for (const key of this.deleting) if (!lost.has(key)) this.deleting.delete(key);
  }

  private forget(node: DynamicNode): void {
    this.nodes.delete(node.queue);
    if (this.byOwner.get(node.owner) === node) this.byOwner.delete(node.owner);
  }

  private delete(node: DynamicNode): void {
    this.forget(node);
    this.backend
      .submit({ type: 'delete', leaderTime: this.backend.now(), queue: node.queue })
      .catch((err: unknown) => {
        this.logger.warn?.({ err, queue: node.queue }, 'dynamic node: delete failed');
      });
  }
}
