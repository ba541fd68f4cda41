/**
 * Dynamic nodes (AMQP 1.0 part 3, 3.5.3 and 3.5.10): a link attached with a `dynamic` source or
 * target gets a broker-named temporary queue, `$temp/<uuid>`, deleted by its lifetime policy.
 *
 * - The queue is an ordinary queue in the replicated state (a cluster replicates it like any
 *   other); its options record the owner (`containerId/linkName` of the link that asked for it)
 *   and the lifetime policy, so any member can recognise the owner re-attaching.
 * - Lifetime policies: `delete-on-close` (the default, as the spec says for dynamic nodes): deleted
 *   when the owner's link closes; `delete-on-no-links`: deleted when no link to it is left.
 *   `delete-on-no-messages` and `delete-on-no-links-or-messages` are honoured as
 *   `delete-on-no-links` (a node is never deleted under an attached link).
 * - A detach with closed=true or a clean connection Close deletes at once. A connection that is
 *   lost (socket gone, member stopped serving, detach without closed) starts the re-attach grace
 *   period instead: the owner re-attaching within it (to the node's address, or dynamically
 *   again under the same container-id and link name, on this member or on another one: a cluster
 *   member learns it from the owner's claim) keeps the node; otherwise it is deleted.
 * - `$`-names are never auto-created, so a reply sent to a deleted node is refused (not-found)
 *   instead of re-creating a queue nobody will ever read.
 */
import { randomUUID } from 'node:crypto';
import type { AmqpValue, Fields } from '../../codec/index.js';
import type { LifetimePolicy, QueueOptions } from '../core/events.js';
import type { BrokerBackend } from './backend.js';
import type { BrokerLogger } from './options.js';

export const TEMP_QUEUE_PREFIX = '$temp/';
/** How long a dynamic node outlives its owner's lost connection, waiting for a re-attach. */
export const DEFAULT_DYNAMIC_GRACE_MS = 30_000;

/** How a link to a dynamic node went away. */
export type LinkGone = 'closed' | 'lost';

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
  /** Deletion pending at the end of the grace period. */
  timer: NodeJS.Timeout | undefined;
}

export class DynamicNodes {
  private readonly nodes = new Map<string, DynamicNode>();
  private readonly byOwner = new Map<string, DynamicNode>();
  private closed = false;

  constructor(
    private readonly backend: BrokerBackend,
    private readonly logger: BrokerLogger,
    private readonly graceMs = DEFAULT_DYNAMIC_GRACE_MS,
  ) {}

  static isTemporary(address: string): boolean {
    return address.startsWith(TEMP_QUEUE_PREFIX);
  }

  /**
   * The node for a dynamic attach by `owner`: the one it already has (re-attach within the grace
   * period), or a new queue declared with `queueDefaults` (committed when this resolves).
   */
  async create(owner: string, policy: LifetimePolicy, queueDefaults: QueueOptions): Promise<string> {
    const existing = this.byOwner.get(owner);
    if (existing && this.backend.state.hasQueue(existing.queue)) return existing.queue;
    const queue = `${TEMP_QUEUE_PREFIX}${randomUUID()}`;
    await this.backend.submit({
      type: 'declare',
      leaderTime: this.backend.now(),
      queue,
      // nothing outlives a temporary queue: its rejected messages are dropped with it
      options: { ...queueDefaults, deadLetterQueue: null, temporary: { owner, policy } },
    });
    return queue;
  }

  /**
   * A link (`handler`, key `linkKey`) attached to `queue`. Returns what to call when it goes, or
   * undefined when `queue` is not a dynamic node.
   */
  attached(queue: string, linkKey: string, handler: object): ((how: LinkGone) => void) | undefined {
    if (this.closed || !DynamicNodes.isTemporary(queue)) return undefined;
    let node = this.nodes.get(queue);
    if (!node) {
      // declared by another member (or before this process started): adopt it here
      const temporary = this.backend.state.queueInfo(queue)?.options.temporary;
      if (!temporary) return undefined;
      node = { queue, owner: temporary.owner, policy: temporary.policy, links: new Map(), timer: undefined };
      this.nodes.set(queue, node);
      this.byOwner.set(node.owner, node);
    }
    if (linkKey === node.owner || node.policy !== 'delete-on-close') this.cancelDeletion(node);
    node.links.set(handler, linkKey);
    const n = node;
    return (how) => this.detached(n, linkKey, handler, how);
  }

  /** Cluster: the link `linkKey` attached on another member; a node it owns is cared for there. */
  ownerMoved(linkKey: string): void {
    const node = this.byOwner.get(linkKey);
    if (!node || node.links.size > 0) return;
    this.cancelDeletion(node);
    this.forget(node);
  }

  /** Stops every grace timer (the server is stopping: the nodes stay in the store). */
  close(): void {
    this.closed = true;
    for (const node of this.nodes.values()) this.cancelDeletion(node);
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
    if (how === 'closed') this.delete(node);
    else if (node.timer === undefined) {
      node.timer = setTimeout(() => {
        node.timer = undefined;
        if (this.closed || (node.policy !== 'delete-on-close' && node.links.size > 0)) return;
        this.delete(node);
      }, this.graceMs);
      node.timer.unref();
    }
  }

  private cancelDeletion(node: DynamicNode): void {
    if (node.timer !== undefined) clearTimeout(node.timer);
    node.timer = undefined;
  }

  private forget(node: DynamicNode): void {
    this.nodes.delete(node.queue);
    if (this.byOwner.get(node.owner) === node) this.byOwner.delete(node.owner);
  }

  private delete(node: DynamicNode): void {
    this.cancelDeletion(node);
    this.forget(node);
    this.backend
      .submit({ type: 'delete', leaderTime: this.backend.now(), queue: node.queue })
      .catch((err: unknown) => {
        this.logger.warn?.({ err, queue: node.queue }, 'dynamic node: delete failed');
      });
  }
}
