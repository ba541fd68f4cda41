/**
 * The ground floor of ConsumerLink (consumer-link.ts): every field it is made of, in one place so
 * the object keeps one shape, and the constructor. Split from the settlement side
 * (consumer-link-settle.ts), the acquire side (consumer-link-acquire.ts) and the lifecycle
 * (consumer-link.ts) so each file has one job; a class chain, not helpers, so the per-message
 * paths stay plain method calls on one object.
 */
import type { OutgoingDelivery, SenderLink } from '../../protocol/index.js';
import type { SettleOutcome } from '../core/events.js';
import type { Selector } from '../selector/index.js';
import type { QueueActivity } from './activity.js';
import { scopedLinkKey } from './identity.js';
import type { LinkHost } from './link-host.js';
import { CongestionPause, DeliveryTags } from './outgoing-link.js';

/** Outcomes of one kind waiting for the next settle event (consumer-link-settle.ts). */
export interface PendingSettle {
  outcome: SettleOutcome;
  seqs: number[];
  deliveries: OutgoingDelivery[];
}

export abstract class ConsumerLinkFields {
  readonly key: string;
  protected closed = false;
  /** Acquire events submitted and not answered yet. */
  protected acquiring = 0;
  /** Messages those acquires asked for: credit already spoken for. */
  protected requested = 0;
  /** Wakes it when a message held for another (gone) link is free for everyone again. */
  protected lapseTimer: NodeJS.Timeout | undefined;
  protected readonly tags = new DeliveryTags();
  /** Waiting for the socket to drain. */
  protected readonly congestion: CongestionPause;
  protected pending = new Map<string, PendingSettle>();
  /** The batch the last outcome went to: a run of one outcome (the usual accepts) skips the key. */
  protected lastOutcome: SettleOutcome | undefined;
  protected lastPending: PendingSettle | undefined;
  protected settleScheduled = false;
  protected readonly queueActivity: QueueActivity;
  /** The selector's verdict per message (keyed by the state's entry): one evaluation per message. */
  protected readonly verdicts = new WeakMap<object, boolean>();

  constructor(
    protected readonly host: LinkHost,
    protected readonly link: SenderLink,
    readonly queue: string,
    /** snd-settle-mode settled: we send pre-settled and remove the message at once. */
    protected readonly presettled: boolean,
    /** A JMS selector: only matching messages are acquired (others stay for other consumers). */
    protected readonly selector?: Selector,
    /** ms what it holds waits for this link after it went away (hold-unsettled); 0: none. */
    protected readonly holdMs = 0,
  ) {
    this.key = scopedLinkKey(host.user, host.containerId, link.name);
    this.queueActivity = host.ctx.activity.queue(queue);
    this.congestion = new CongestionPause(host, () => this.pump());
    // we settle our side ourselves, after the settle event committed
    link.autoSettle = false;
  }

  /** Acquires as many messages as there is unused credit for (consumer-link-acquire.ts). */
  protected abstract pump(): void;
}
