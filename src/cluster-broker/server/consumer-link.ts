/**
 * A consumer's link (we send, the client receives), fed from one queue through the backend.
 *
 * - Credit: acquire events ask for at most the credit not yet used; what comes back is sent with
 *   a rewritten header (delivery-count, first-acquirer) and the stored bytes otherwise untouched.
 *   Several acquires may be in flight at once (a cluster commits each through the log, so one at
 *   a time would leave the link idle for a replication round trip per batch); they cover
 *   disjoint parts of the credit, commit in submission order and are answered in that order, so
 *   the link still sends in queue order (docs/delivery-contract.md#acquisition).
 *   An empty answer parks the link in the registry until the queue gets messages again.
 * - Outcomes from the client become settle events (batched per outcome, one per microtask). In
 *   rcv-settle-mode second we settle our side only once the settle event is committed, so the
 *   client's confirmed accept means "removed".
 * - Drain: once the queue is empty the engine answers by advancing delivery-count.
 * - Detach / connection loss / stolen: one release-consumer event; acquired unsettled messages
 *   become available again with delivery-count + 1 (past the queue's delivery limit, they go to
 *   its dead-letter queue: docs/broker-features.md#delivery-limit).
 */
import { type DeliveryState, type MessageHeader, splitMessage, withHeader } from '../../codec/index.js';
import {
  isTerminal,
  type OutgoingDelivery,
  type SenderLink,
  type SendOptions,
} from '../../protocol/index.js';
import type { AcquireEvent, SettleOutcome } from '../core/events.js';
import type { AcquiredMessage } from '../core/results.js';
import type { Selector } from '../selector/index.js';
import type { QueueActivity } from './activity.js';
import type { RegisteredConsumer } from './context.js';
import { scopedLinkKey } from './identity.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { CongestionPause, DeliveryTags } from './outgoing-link.js';
import { hasFirstAcquirerOnlyHeader } from './stored-header.js';

/** The default outcome our sources advertise (docs/delivery-contract.md#outcomes). */
export const DEFAULT_OUTCOME: SettleOutcome = { type: 'modified', deliveryFailed: true };

interface PendingSettle {
  outcome: SettleOutcome;
  seqs: number[];
  deliveries: OutgoingDelivery[];
}

/** Messages asked for in one acquire event at most (a huge credit is served in batches). */
const MAX_ACQUIRE = 256;

/** Acquire events one link has in flight at most. */
const MAX_ACQUIRES_IN_FLIGHT = 4;
/**
 * How long what a link held unsettled waits for that link when it went away, for a receiver that
 * asked (`quorate:hold-unsettled`, docs/delivery-contract.md#held-unsettled): long enough for a
 * client to fail over and re-attach, short of the client's ten-minute dedup memory.
 */
export const HOLD_UNSETTLED_MS = 60_000;

/**
 * A further acquire while one is in flight asks for at least this many messages: credit that
 * trickles in (a client topping up per message) waits and goes into the next acquire whole, so
 * pipelining never multiplies the log entries per message.
 */
const MIN_PIPELINED_ACQUIRE = 32;

/** The send options of each delivery (shared: no object per delivery). */
const PRESETTLED: SendOptions = Object.freeze({ settled: true });
const UNSETTLED: SendOptions = Object.freeze({ settled: false });

/** Our settlement marker in OutgoingDelivery.context: the seq, or -1 once its outcome is taken. */
const TAKEN = -1;

export class ConsumerLink implements LinkHandler, RegisteredConsumer {
  readonly key: string;
  private closed = false;
  /** Acquire events submitted and not answered yet. */
  private acquiring = 0;
  /** Messages those acquires asked for: credit already spoken for. */
  private requested = 0;
  /** Wakes it when a message held for another (gone) link is free for everyone again. */
  private lapseTimer: NodeJS.Timeout | undefined;
  private readonly tags = new DeliveryTags();
  /** Waiting for the socket to drain. */
  private readonly congestion: CongestionPause;
  private pending = new Map<string, PendingSettle>();
  /** The batch the last outcome went to: a run of one outcome (the usual accepts) skips the key. */
  private lastOutcome: SettleOutcome | undefined;
  private lastPending: PendingSettle | undefined;
  private settleScheduled = false;
  private readonly queueActivity: QueueActivity;
  /** The selector's verdict per message (keyed by the state's entry): one evaluation per message. */
  private readonly verdicts = new WeakMap<object, boolean>();

  constructor(
    private readonly host: LinkHost,
    private readonly link: SenderLink,
    readonly queue: string,
    /** snd-settle-mode settled: we send pre-settled and remove the message at once. */
    private readonly presettled: boolean,
    /** A JMS selector: only matching messages are acquired (others stay for other consumers). */
    private readonly selector?: Selector,
    /** ms what it holds waits for this link after it went away (hold-unsettled); 0: none. */
    private readonly holdMs = 0,
  ) {
    this.key = scopedLinkKey(host.user, host.containerId, link.name);
    this.queueActivity = host.ctx.activity.queue(queue);
    this.congestion = new CongestionPause(host, () => this.pump());
    // we settle our side ourselves, after the settle event committed
    link.autoSettle = false;
  }

  /** Registers (stealing from a predecessor) and starts pumping if credit is already there. */
  start(): void {
    const { consumers, backend } = this.host.ctx;
    consumers.add(this);
    if (backend.state.acquiredBy(this.key).length > 0) {
      // A predecessor elsewhere (another member, a connection not yet known dead) still holds
      // messages under this link's identity: take over by releasing them first. Submission
      // order is commit order, so this release precedes our first acquire.
      backend
        .submit({ type: 'release-consumer', leaderTime: backend.now(), consumer: this.key })
        .catch((err: unknown) => this.host.fail(err));
    }
    if (this.holdMs > 0) {
      // before the first acquire (submission order is commit order)
      backend
        .submit({
          type: 'hold-unsettled',
          leaderTime: backend.now(),
          consumer: this.key,
          link: this.key,
          ms: this.holdMs,
        })
        .catch((err: unknown) => this.host.fail(err));
    }
    this.pump();
  }

  get unusedCredit(): number {
    if (this.closed || this.link.state !== 'attached') return 0;
    // an acquire in flight may already hold messages it has not sent: count them as used
    return Math.max(0, this.link.credit - this.link.queued - this.requested);
  }

  onCredit(): void {
    this.host.ctx.consumers.demandFreed(this.queue);
    this.pump();
  }

  wake(): void {
    try {
      this.pump();
    } catch (err) {
      this.host.internalError(err);
    }
  }

  steal(): void {
    try {
      this.detachStolen();
    } catch (err) {
      this.host.internalError(err);
    }
  }

  private detachStolen(): void {
    if (this.closed) return;
    this.host.ctx.counters.linksStolen++;
    this.link.detach({
      condition: 'amqp:link:stolen',
      description: `link '${this.link.name}' re-attached by container '${this.host.containerId}' elsewhere`,
    });
    this.host.scheduleFlush();
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.lapseTimer) clearTimeout(this.lapseTimer);
    const { consumers, backend } = this.host.ctx;
    consumers.remove(this);
    // settle what the client already decided, then give back the rest
    this.flushSettles();
    backend.submit({ type: 'release-consumer', leaderTime: backend.now(), consumer: this.key }).catch(() => {
      // the connection is going away anyway; a lost release is redone by the next acquirer's
      // release-all on restart, and in a cluster by the member that notices the consumer gone
    });
  }

  /** Acquires as many messages as there is unused credit for. */
  private pump(): void {
    while (this.acquireMore()) {
      // one more acquire in flight
    }
  }

  /**
   * Submits one acquire for credit no acquire in flight covers yet; false when there is nothing
   * to ask for now. Beyond the first, an acquire is only worth a log entry when it asks for a
   * batch and this member's state shows more messages available than those in flight asked for
   * (else it would most likely come back empty). A selector's acquire names its seqs, so it runs
   * one at a time.
   */
  private acquireMore(): boolean {
    if (this.closed || this.link.state !== 'attached') return false;
    if (this.acquiring >= (this.selector ? 1 : MAX_ACQUIRES_IN_FLIGHT)) return false;
    const want = Math.min(this.link.credit - this.link.queued - this.requested, MAX_ACQUIRE);
    if (want <= 0 || (this.acquiring > 0 && want < MIN_PIPELINED_ACQUIRE)) return false;
    if (this.congestion.holds()) return false;
    const { backend, consumers } = this.host.ctx;
    if (this.acquiring > 0 && (backend.state.queueInfo(this.queue)?.available ?? 0) <= this.requested) {
      return false;
    }
    const epoch = consumers.epoch(this.queue);
    const event: AcquireEvent = {
      type: 'acquire',
      leaderTime: backend.now(),
      queue: this.queue,
      consumer: this.key,
      max: want,
    };
    if (this.selector) {
      event.seqs = this.matching(want);
      if (event.seqs.length === 0) {
        consumers.wait(this);
        if (this.link.drain) {
          this.link.completeDrain();
          this.host.scheduleFlush();
        }
        return false;
      }
    }
    this.acquiring++;
    this.requested += want;
    const answered = (): void => {
      this.acquiring--;
      // the credit it held back is used (messages sent) or unused again: either way Q's gap grew
      this.requested -= want;
      consumers.demandFreed(this.queue);
    };
    backend
      .submit(event)
      .then(
        (result) => {
          answered();
          // acquired after close: the release-consumer submitted at close (later in the log) frees them
          if (this.closed) return;
          for (const m of result.messages) this.send(m);
          if (result.messages.length > 0) {
            this.host.scheduleFlush();
            this.pump();
            return;
          }
          if (consumers.epoch(this.queue) !== epoch) {
            this.pump(); // something arrived while we asked
            return;
          }
          consumers.wait(this);
          this.wakeAtLapse();
          // a drain is answered once no acquire is left that could still bring messages
          if (this.link.drain && this.acquiring === 0) {
            this.link.completeDrain();
            this.host.scheduleFlush();
          }
        },
        (err: unknown) => {
          answered();
          this.host.fail(err);
        },
      )
      .catch((err: unknown) => this.host.internalError(err));
    return true;
  }

  /**
   * Messages held for another link that went away become everyone's at a leader time no event
   * marks: try again then (nothing else would wake this link for them).
   */
  private wakeAtLapse(): void {
    if (this.lapseTimer !== undefined) return;
    const { backend } = this.host.ctx;
    const at = backend.state.reservationLapse(this.queue, this.key);
    if (at === undefined) return;
    this.lapseTimer = setTimeout(
      () => {
        this.lapseTimer = undefined;
        this.wake();
      },
      Math.max(0, at - backend.now()) + 1,
    );
    this.lapseTimer.unref();
  }

  /** Up to `want` available messages the selector matches, in delivery order (each evaluated once). */
  private matching(want: number): number[] {
    const seqs: number[] = [];
    const selector = this.selector!;
    this.host.ctx.backend.state.scanAvailable(this.queue, (seq, message, entry) => {
      let match = this.verdicts.get(entry);
      if (match === undefined) {
        match = selector.matches(message);
        this.verdicts.set(entry, match);
      }
      if (match) seqs.push(seq);
      return seqs.length < want;
    });
    return seqs;
  }

  private send(m: AcquiredMessage): void {
    // the engine detached the link (a protocol error): the message stays acquired until the
    // detach completes or the connection goes, and release-consumer gives it back
    if (this.link.state !== 'attached') return;
    const bytes = rewriteHeader(m);
    const max = this.link.remoteMaxMessageSize;
    if (max > 0 && bytes.length > max) {
      // larger than the receiver's max-message-size: never offer it to this link again
      this.queueSettle(m.seq, { type: 'modified', undeliverableHere: true }, undefined);
      return;
    }
    const d = this.link.send(this.tags.next(), bytes, this.presettled ? PRESETTLED : UNSETTLED);
    const { counters, activity } = this.host.ctx;
    counters.messagesOut++;
    activity.totals.delivered++;
    this.queueActivity.delivered++;
    if (!m.firstAcquirer) activity.totals.redelivered++;
    if (this.presettled) {
      activity.totals.acknowledged++;
      this.queueSettle(m.seq, { type: 'accepted' }, undefined);
      return;
    }
    d.context = m.seq;
  }

  /** The client's disposition for one of our deliveries. */
  onUpdate(d: OutgoingDelivery): void {
    if (this.closed) return;
    const seq = d.context;
    if (typeof seq !== 'number' || seq === TAKEN) return;
    const state = d.remoteState;
    if (state?.type === 'transactional-state') {
      if (!isTerminal(state.outcome)) return;
      const txn = this.host.transactions.get(state.txnId);
      // an unknown txn-id: the outcome cannot be held anywhere; the message stays acquired until
      // this link goes (then it is released)
      if (txn === undefined) return;
      d.context = TAKEN;
      txn.settlements.push({
        consumer: this.key,
        seq,
        outcome: toOutcome(state.outcome),
        committed: () => {
          if (!d.settled && this.link.state === 'attached') {
            d.settle();
            this.host.scheduleFlush();
          }
        },
        rolledBack: () => {
          if (!this.closed) this.queueSettle(seq, { type: 'released' }, d);
        },
      });
      return;
    }
    if (!isTerminal(state) && !d.remoteSettled) return; // 'received' or nothing yet
    d.context = TAKEN;
    const outcome = toOutcome(state);
    if (outcome.type === 'accepted') this.host.ctx.activity.totals.acknowledged++;
    else if (outcome.type === 'rejected') this.host.ctx.activity.totals.rejected++;
    this.queueSettle(seq, outcome, d);
  }

  private queueSettle(seq: number, outcome: SettleOutcome, d: OutgoingDelivery | undefined): void {
    let p = outcome === this.lastOutcome ? this.lastPending : undefined;
    if (p === undefined) {
      const k = outcomeKey(outcome);
      p = this.pending.get(k);
      if (!p) {
        p = { outcome, seqs: [], deliveries: [] };
        this.pending.set(k, p);
      }
      this.lastOutcome = outcome;
      this.lastPending = p;
    }
    p.seqs.push(seq);
    if (d && !d.settled) p.deliveries.push(d);
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    queueMicrotask(() => this.flushSettles());
  }

  private flushSettles(): void {
    this.settleScheduled = false;
    this.lastOutcome = undefined;
    this.lastPending = undefined;
    if (this.pending.size === 0) return;
    const batches = [...this.pending.values()];
    this.pending.clear();
    const { backend } = this.host.ctx;
    for (const p of batches) {
      backend
        .submit({
          type: 'settle',
          leaderTime: backend.now(),
          consumer: this.key,
          seqs: p.seqs,
          outcome: p.outcome,
        })
        .then(
          () => {
            // rcv-settle-mode second: the client waits for our settlement to confirm its outcome
            for (const d of p.deliveries) if (!d.settled) d.settle();
            if (p.deliveries.length > 0) this.host.scheduleFlush();
          },
          (err: unknown) => this.host.fail(err),
        )
        .catch((err: unknown) => this.host.internalError(err));
    }
  }
}

/** Shared outcomes without fields: one object for every delivery settled with them (never mutated). */
const ACCEPTED: SettleOutcome = Object.freeze({ type: 'accepted' });
const RELEASED: SettleOutcome = Object.freeze({ type: 'released' });

function toOutcome(state: DeliveryState | undefined): SettleOutcome {
  switch (state?.type) {
    case 'accepted':
      return ACCEPTED;
    case 'rejected': {
      const e = state.error;
      if (!e) return { type: 'rejected' };
      return {
        type: 'rejected',
        error:
          e.description === undefined
            ? { condition: e.condition }
            : { condition: e.condition, description: e.description },
      };
    }
    case 'released':
      return RELEASED;
    case 'modified': {
      // undeliverable-here is applied by the queue (core/broker-state.ts): never again to this
      // link, or dead-lettered at once on a queue with a delivery limit
      return {
        type: 'modified',
        ...(state.deliveryFailed ? { deliveryFailed: true } : {}),
        ...(state.undeliverableHere ? { undeliverableHere: true } : {}),
      };
    }
    default:
      // settled with no outcome: the source's default outcome applies
      return DEFAULT_OUTCOME;
  }
}

function outcomeKey(o: SettleOutcome): string {
  switch (o.type) {
    case 'rejected':
      return o.error ? `rejected:${o.error.condition}:${o.error.description ?? ''}` : 'rejected';
    case 'modified':
      return `modified:${o.deliveryFailed ? 1 : 0}${o.undeliverableHere ? 1 : 0}`;
    default:
      return o.type;
  }
}

/**
 * The stored bytes with only the header section replaced (delivery-count, first-acquirer); the
 * stored bytes themselves when their header already says so (a first delivery: the publisher
 * link stored it with first-acquirer set).
 */
export function rewriteHeader(m: AcquiredMessage): Uint8Array {
  // the common first delivery, seen without a decode: stored with the header a publisher link
  // writes on a message sent without one (docs/architecture.md#delivery-path)
  if (m.deliveryCount === 0 && m.firstAcquirer && hasFirstAcquirerOnlyHeader(m.message)) return m.message;
  const { header } = splitMessage(m.message);
  if (
    (header?.deliveryCount ?? 0) === m.deliveryCount &&
    (header?.firstAcquirer ?? false) === m.firstAcquirer
  ) {
    return m.message;
  }
  const h: MessageHeader = { ...header };
  if (m.deliveryCount > 0) h.deliveryCount = m.deliveryCount;
  else delete h.deliveryCount;
  if (m.firstAcquirer) h.firstAcquirer = true;
  else delete h.firstAcquirer;
  return withHeader(m.message, h);
}
