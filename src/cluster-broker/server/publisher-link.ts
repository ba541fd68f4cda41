/**
 * A publisher's link (the client sends, we receive): every complete message becomes an enqueue
 * event (carrying its message-id's dedup key only when this link deduplicates); the transfer is settled only once the backend says the enqueue is committed
 * (accepted / duplicate -> accepted, refused -> rejected with the condition). A failed submit
 * settles nothing and closes the connection (docs/delivery-contract.md#unknown-outcome).
 */
import {
  type AmqpErrorBody,
  type DeliveryState,
  type MessageHeader,
  peekMessage,
  withHeader,
} from '../../codec/index.js';
import { messageIdKey } from '../../codec/message-id.js';
import { copyWith } from '../../common/copy-with.js';
import { ACCEPTED, type IncomingDelivery, ownedBytes, type ReceiverLink } from '../../protocol/index.js';
import type { EnqueueEvent } from '../core/events.js';
import type { EnqueueResult } from '../core/results.js';
import { RecordTooLargeError } from '../files/errors.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { RelayTargets } from './relay.js';
import { FIRST_ACQUIRER_ONLY } from './stored-header.js';

export class PublisherLink implements LinkHandler {
  /** Messages submitted and not yet settled. */
  private inflight = 0;
  private closed = false;
  /** Set while waiting for a resource alarm to clear (cancels the wait). */
  private cancelWait: (() => void) | undefined;
  /** An anonymous relay's checks on each message's `to` (undefined: a link to one queue). */
  private readonly relay: RelayTargets | undefined;

  constructor(
    private readonly host: LinkHost,
    private readonly link: ReceiverLink,
    /** The target queue; undefined for an anonymous relay (each message names its queue in `to`). */
    readonly queue: string | undefined,
    /** Deduplicate by message-id (the sender desired `quorate:dedup`, or the broker runs `--dedup`). */
    private readonly dedup: boolean,
  ) {
    // storedForm copies what an event keeps: a copy by the engine first would be a second one
    link.keepPayloadViews = true;
    this.relay = queue === undefined ? new RelayTargets(host) : undefined;
  }

  /** Grants the first credit window (call after accept), unless a resource alarm is on. */
  start(): void {
    if (this.blockedByAlarm()) return;
    this.link.flow(this.host.ctx.opts.publisherCredit);
  }

  close(): void {
    this.closed = true;
    this.cancelWait?.();
    this.cancelWait = undefined;
  }

  /**
   * True while a memory or disk alarm is on: no new credit. The link then waits for the alarm to
   * clear and tops up (the credit it already holds is not revoked: at most one window arrives).
   */
  private blockedByAlarm(): boolean {
    const alarm = this.host.ctx.alarm;
    if (alarm === undefined || !alarm.blocked) return false;
    this.cancelWait ??= alarm.whenClear(() => {
      this.cancelWait = undefined;
      this.topUp();
    });
    return true;
  }

  onMessage(d: IncomingDelivery): void {
    const { backend, counters, alarm } = this.host.ctx;
    counters.messagesIn++;
    alarm?.noteIngress(d.payload.length);
    let event: EnqueueEvent | AmqpErrorBody;
    try {
      event = this.enqueueEvent(d.payload, backend.now());
    } catch (err) {
      const description = `undecodable message: ${(err as Error).message ?? String(err)}`;
      event = { condition: 'amqp:decode-error', description };
    }
    if (!('type' in event)) {
      // refused before anything is submitted: the link stays usable
      if (!d.remoteSettled) d.disposition({ type: 'rejected', error: event });
      this.topUp();
      return;
    }
    const txState = d.remoteState;
    if (txState?.type === 'transactional-state') {
      // a transactional send: enqueued only when its transaction commits
      const txn = this.host.transactions.get(txState.txnId);
      if (txn === undefined) {
        if (!d.remoteSettled)
          d.disposition({
            type: 'rejected',
            error: {
              condition: 'amqp:transaction:unknown-id',
              description: 'no open transaction with this txn-id',
            },
          });
      } else {
        txn.enqueues.push({ event });
        if (!d.remoteSettled)
          d.disposition({ type: 'transactional-state', txnId: txState.txnId, outcome: ACCEPTED });
      }
      this.topUp();
      return;
    }
    if (d.remoteSettled) {
      // pre-settled (at-most-once): nobody waits for an outcome
      backend.submit(event).then(
        (result) => this.count(result, event.queue),
        (err: unknown) => this.host.fail(err),
      );
      this.topUp();
      return;
    }
    this.inflight++;
    backend
      .submit(event)
      .then(
        (result) => this.settle(d, result, event.queue),
        (err: unknown) => {
          // surely not committed, and about this message alone: refused, the link goes on
          if (err instanceof RecordTooLargeError) this.refuse(d, err);
          else this.host.fail(err);
        },
      )
      .catch((err: unknown) => this.host.internalError(err));
  }

  /** The enqueue event of a message, or why a relayed one is refused. */
  private enqueueEvent(bytes: Uint8Array, now: number): EnqueueEvent | AmqpErrorBody {
    const queue =
      this.relay === undefined ? this.queue! : this.relay.target(peekMessage(bytes).properties?.to);
    if (typeof queue !== 'string') return queue;
    return enqueueEventFor(bytes, queue, now, this.dedup);
  }

  /** Monitoring counters (per queue: a relay link publishes to many). */
  private count(result: EnqueueResult, queue: string): void {
    if (result.status === 'enqueued') {
      this.host.ctx.activity.totals.published++;
      this.host.ctx.activity.queue(queue).published++;
    } else if (result.status === 'duplicate') this.host.ctx.activity.totals.deduplicated++;
  }

  private settle(d: IncomingDelivery, result: EnqueueResult, queue: string): void {
    this.inflight--;
    this.count(result, queue);
    if (!d.settled) {
      const state: DeliveryState =
        result.status === 'refused'
          ? { type: 'rejected', error: { condition: result.condition, description: result.description } }
          : ACCEPTED;
      d.disposition(state);
    }
    this.topUp();
    this.host.scheduleFlush();
  }

  /** Settles `d` rejected with `err`'s condition (an enqueue that surely did not commit). */
  private refuse(d: IncomingDelivery, err: RecordTooLargeError): void {
    this.inflight--;
    if (!d.settled)
      d.disposition({ type: 'rejected', error: { condition: err.condition, description: err.description } });
    this.topUp();
    this.host.scheduleFlush();
  }

  /** Keeps credit + unsettled at the window: a publisher can never run ahead of the commits by more. */
  private topUp(): void {
    if (this.closed || this.link.state !== 'attached') return;
    const window = this.host.ctx.opts.publisherCredit;
    if (this.link.credit + this.inflight <= window >>> 1) {
      if (this.blockedByAlarm()) return;
      this.link.flow(window - this.inflight);
      this.host.scheduleFlush();
    }
  }
}

/**
 * The enqueue event of one encoded message sent to `queue` (a publisher's, or one a federation
 * link moves): the stored form, the dedup key of its message-id when `dedup`, its expiry from
 * ttl / absolute-expiry-time, its delivery-count. `owned`: `bytes` are the caller's own (not a
 * view of a socket chunk), so when they are already in the stored form they are kept as they are
 * (a federation link's copy, federation/copy.ts).
 */
export function enqueueEventFor(
  bytes: Uint8Array,
  queue: string,
  now: number,
  dedup: boolean,
  owned = false,
): EnqueueEvent {
  const { header, properties, headerEnd } = peekMessage(bytes);
  const event: EnqueueEvent = {
    type: 'enqueue',
    leaderTime: now,
    queue,
    message: owned && header?.firstAcquirer === true ? bytes : storedForm(bytes, header, headerEnd),
  };
  const key = dedup ? messageIdKey(properties?.messageId) : undefined;
  if (key !== undefined) event.dedupKey = key;
  let expiresAt: number | undefined;
  const ttl = header?.ttl;
  if (typeof ttl === 'number' && ttl > 0) expiresAt = now + ttl;
  const abs = properties?.absoluteExpiryTime;
  if (abs instanceof Date && !Number.isNaN(abs.getTime())) {
    const t = abs.getTime();
    if (t > 0 && (expiresAt === undefined || t < expiresAt)) expiresAt = t;
  }
  if (expiresAt !== undefined) event.expiresAt = expiresAt;
  if (header?.deliveryCount) event.deliveryCount = header.deliveryCount;
  return event;
}

/**
 * What the queue stores: the message with first-acquirer set in its header (only the header
 * changes), so the first delivery goes out as stored, with no rewrite; later ones rewrite the
 * header (rewrite-header.ts).
 *
 * The result only lives as long as the event that carries it: applying an enqueue copies the bytes
 * into the queue's own memory (core/byte-arena.ts), so a socket chunk is never kept by a queued
 * message, and this needs no buffer of its own. `bytes` is the engine's view into the socket chunk
 * it arrived in (publisher links keep views, ReceiverLink.keepPayloadViews), so it is kept as it is
 * when its header is already right, copied only when small (ownedBytes); otherwise the new form
 * goes into Node's buffer pool (no zero-fill, no ArrayBuffer per message for the common sizes).
 */
function storedForm(bytes: Uint8Array, header: MessageHeader | undefined, headerEnd: number): Uint8Array {
  // kept as received: a small view of a socket chunk is copied, so that a transaction holding it
  // does not pin the chunk
  if (header?.firstAcquirer === true) return ownedBytes(bytes);
  const head =
    header === undefined ? FIRST_ACQUIRER_ONLY : withHeader(EMPTY, copyWith(header, 'firstAcquirer', true));
  const out = Buffer.allocUnsafe(head.length + bytes.length - headerEnd);
  out.set(head, 0);
  out.set(bytes.subarray(headerEnd), head.length);
  return out;
}

const EMPTY = new Uint8Array(0);
