/**
 * Sending side of a link: credit per spec 2.6.7, a queue of deliveries not yet written (credit
 * or session window exhausted), multi-frame splitting to the negotiated max frame size.
 */

import { LinkError } from '../errors.js';
import type { Attach, DeliveryState, Flow, Transfer } from './codec-port.js';
import { Condition, serialDiff } from './conditions.js';
import { isTerminal, OutgoingDelivery } from './delivery.js';
import { Link } from './link.js';

export interface SendOptions {
  /** Send pre-settled. Default: per snd-settle-mode (settled mode: true, otherwise false). */
  settled?: boolean;
  messageFormat?: number;
  /** The transfer's delivery state (part 4: a transactional-state naming the txn-id). */
  state?: DeliveryState;
}

const EMPTY = new Uint8Array(0);

export class SenderLink extends Link {
  readonly role = 'sender' as const;
  /** Settle locally as soon as the peer reports an outcome (the usual client behaviour). */
  autoSettle = true;
  /** The receiver asked to drain and we have not answered yet. */
  drainPending = false;
  /** The receiver's last flow had drain set. */
  drain = false;
  /** Fetches by the link's owner that may still bring messages (holdDrain). */
  private drainHolds = 0;
  /** The receiver's flow asked for ours back (echo): answer even while a drain is held. */
  private echoAsked = false;
  private queue: (OutgoingDelivery | undefined)[] = [];
  private head = 0;

  /** Deliveries not completely written yet. */
  get queued(): number {
    return this.queue.length - this.head;
  }

  /** True when a send() now would be written at once (credit, window and attach state allow). */
  get sendable(): boolean {
    return this.state === 'attached' && this.credit > 0 && this.queued === 0 && this.session.canTransfer();
  }

  /** The peer's max-message-size (0: none). */
  get remoteMaxMessageSize(): number {
    return this.remote?.maxMessageSize ?? 0;
  }

  /**
   * Queue a message and write as much as credit and the session window allow. The returned
   * delivery's `status`/`written` tell whether it reached the output or still waits.
   */
  send(tag: Uint8Array, payload: Uint8Array, opts?: SendOptions): OutgoingDelivery {
    if (this.state === 'detach-sent' || this.state === 'detached') {
      throw new LinkError(Condition.illegalState, `send() on detached link '${this.name}'`);
    }
    if (tag.length > 32) throw new LinkError(Condition.invalidField, 'delivery-tag longer than 32 bytes');
    const max = this.remoteMaxMessageSize;
    if (max > 0 && payload.length > max) {
      throw new LinkError(
        Condition.messageSizeExceeded,
        `message of ${payload.length} bytes exceeds the peer's max-message-size ${max}`,
      );
    }
    const mode = this.local?.sndSettleMode ?? 2;
    const settled = mode === 1 ? true : mode === 0 ? false : (opts?.settled ?? false);
    const d = new OutgoingDelivery(this, tag, payload, settled, opts?.messageFormat ?? 0);
    if (opts?.state) d.state = opts.state;
    this.queue.push(d);
    if (this.queue.length - this.head === 1) this.pump();
    return d;
  }

  /** @internal write what credit and the session window allow. */
  pump(): void {
    if (this.state !== 'attached') return;
    const session = this.session;
    while (this.head < this.queue.length) {
      const d = this.queue[this.head]!;
      if (!d.written && this.credit <= 0) break;
      if (!session.canTransfer()) {
        session.blockOnWindow(this);
        break;
      }
      if (this.writeFrame(d)) {
        this.queue[this.head++] = undefined;
      }
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.drainPending && (this.credit === 0 || this.head === this.queue.length))
      this.session.markFlow(this);
  }

  /** Writes one frame of `d`; true when it was its last. */
  private writeFrame(d: OutgoingDelivery): boolean {
    const session = this.session;
    if (d.abortRequested) {
      session.writeTransfer({ handle: this.handle, aborted: true }, EMPTY);
      d.status = 'aborted';
      d.payload = EMPTY;
      session.untrackOutgoing(d);
      return true;
    }
    const maxPayload = session.maxTransferPayload();
    const total = d.payload.length;
    const end = Math.min(total, d.offset + maxPayload);
    const more = end < total;
    const chunk = d.offset === 0 && !more ? d.payload : d.payload.subarray(d.offset, end);
    if (!d.written) {
      d.written = true;
      d.id = session.allocDeliveryId();
      this.credit--;
      this.deliveryCount = (this.deliveryCount + 1) >>> 0;
      if (!d.presettled) session.trackOutgoing(d);
      if (d.state) {
        const t: Transfer = {
          handle: this.handle,
          deliveryId: d.id,
          deliveryTag: d.tag,
          messageFormat: d.messageFormat,
          state: d.state,
        };
        if (d.presettled) t.settled = true;
        if (more) t.more = true;
        session.writeTransfer(t, chunk);
      } else {
        // the usual delivery: its head written straight from these fields (no performative object)
        session.writeDeliveryStart(this.handle, d, more, chunk);
      }
    } else {
      const t: Transfer = { handle: this.handle };
      if (more) t.more = true;
      session.writeTransfer(t, chunk);
    }
    d.offset = end;
    if (more) {
      d.status = 'partial';
      return false;
    }
    d.payload = EMPTY;
    d.status = d.presettled ? 'settled' : 'sent';
    return true;
  }

  /** @internal */
  settleDelivery(d: OutgoingDelivery, state?: DeliveryState): void {
    if (d.settled) return;
    if (!d.written) {
      this.abortDelivery(d);
      return;
    }
    d.status = 'settled';
    d.localState = state;
    this.session.untrackOutgoing(d);
    if (!d.remoteSettled) this.session.queueDisposition(false, d.id, state, true);
  }

  /** @internal */
  abortDelivery(d: OutgoingDelivery): void {
    if (d.settled) return;
    if (!d.written) {
      const i = this.queue.indexOf(d, this.head);
      if (i >= 0) this.queue.splice(i, 1);
      d.status = 'aborted';
      d.payload = EMPTY;
      return;
    }
    if (d.status === 'partial') {
      // the aborting transfer needs session window like any other: pump writes it
      d.abortRequested = true;
      this.pump();
    }
  }

  /** @internal the receiver's disposition for one of our deliveries. */
  onDisposition(d: OutgoingDelivery, state: DeliveryState | undefined, settled: boolean): void {
    if (state) d.remoteState = state;
    if (settled) d.remoteSettled = true;
    if (this.autoSettle && !d.settled && (settled || isTerminal(state))) {
      // rcv-settle-mode second: the receiver waits for us to settle before it settles
      this.settleDelivery(d, undefined);
    } else if (settled && !d.settled) {
      d.status = 'settled';
      this.session.untrackOutgoing(d);
    }
  }

  /** Deliveries written and not settled yet, oldest first (in doubt if the connection dies). */
  unsettled(): OutgoingDelivery[] {
    return this.session.unsettledOutgoing(this);
  }

  /** All deliveries not yet completely written, oldest first (for failover replay). */
  pendingDeliveries(): OutgoingDelivery[] {
    return this.queue.slice(this.head) as OutgoingDelivery[];
  }

  protected override onLocalAttach(a: Attach): void {
    this.deliveryCount = a.initialDeliveryCount ?? 0;
  }

  protected override onAttached(): void {
    if (this.queued > 0) this.pump();
  }

  override onFlow(flow: Flow): void {
    if (flow.linkCredit !== undefined) {
      const dcRemote = flow.deliveryCount ?? this.local?.initialDeliveryCount ?? 0;
      this.credit = Math.max(0, flow.linkCredit + serialDiff(dcRemote, this.deliveryCount));
    }
    this.drain = flow.drain === true;
    if (this.drain) {
      this.drainPending = true;
      this.session.markFlow(this);
    }
    if (flow.echo) {
      this.echoAsked = true;
      this.session.markFlow(this);
    }
    this.pump();
    this.session.conn.emit({ type: 'link-credit', link: this, drain: this.drain });
  }

  /** Answer a drain request at the next flush (also done automatically at the next takeOutput()). */
  completeDrain(): void {
    if (this.drainPending) this.session.markFlow(this);
  }

  /**
   * The link's owner started fetching messages for it that arrive later (a cluster member's
   * acquire goes through its log): a drain is not answered while a hold is left, so the answer
   * does not use up credit the fetch is about to send on. Each hold is released once
   * (releaseDrain), whatever the fetch brought.
   */
  holdDrain(): void {
    this.drainHolds++;
  }

  /** A fetch holdDrain() announced is over: a drain waiting for it is answered at the next flush. */
  releaseDrain(): void {
    if (this.drainHolds === 0) return;
    if (--this.drainHolds === 0 && this.drainPending) this.session.markFlow(this);
  }

  override fillFlow(flow: Flow): boolean {
    if (this.drainPending) {
      this.drainPending = false; // so pump() does not queue another flow for this one
      this.pump();
      if (this.credit > 0 && (this.queued > 0 || this.drainHolds > 0)) {
        // still sending or fetching: the drain is answered when the credit or the queue runs out
        // (pump) or the last hold goes (releaseDrain). No flow until then: one saying drain with
        // credit left would read as a drain answered wrongly (rhea logs it as an error).
        this.drainPending = true;
        if (!this.echoAsked) return false;
      } else {
        this.deliveryCount = (this.deliveryCount + this.credit) >>> 0;
        this.credit = 0;
      }
    }
    this.echoAsked = false;
    flow.handle = this.handle;
    flow.deliveryCount = this.deliveryCount;
    flow.linkCredit = this.credit;
    flow.available = this.queued;
    if (this.drain) flow.drain = true;
    return true;
  }
}
