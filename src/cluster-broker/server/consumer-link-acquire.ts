/**
 * ConsumerLink's acquire side (consumer-link.ts): credit becomes acquire events (several in
 * flight, each for a disjoint part of the credit, answered in order), a selector picks the seqs,
 * an empty answer parks the link in the registry, and what comes back is sent with its header
 * rewritten.
 */
import type { SendOptions } from '../../protocol/index.js';
import type { AcquireEvent } from '../core/events.js';
import type { AcquiredMessage } from '../core/results.js';
import { ConsumerLinkSettle } from './consumer-link-settle.js';
import { rewriteHeader } from './rewrite-header.js';

/** Messages asked for in one acquire event at most (a huge credit is served in batches). */
const MAX_ACQUIRE = 256;

/** Acquire events one link has in flight at most. */
const MAX_ACQUIRES_IN_FLIGHT = 4;

/**
 * A further acquire while one is in flight asks for at least this many messages: credit that
 * trickles in (a client topping up per message) waits and goes into the next acquire whole, so
 * pipelining never multiplies the log entries per message.
 */
const MIN_PIPELINED_ACQUIRE = 32;

/** The send options of each delivery (shared: no object per delivery). */
const PRESETTLED: SendOptions = Object.freeze({ settled: true });
const UNSETTLED: SendOptions = Object.freeze({ settled: false });

export abstract class ConsumerLinkAcquire extends ConsumerLinkSettle {
  /** consumer-link.ts; declared here so this layer is the RegisteredConsumer it parks in the registry. */
  abstract steal(): void;

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

  /** Acquires as many messages as there is unused credit for. */
  protected pump(): void {
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
    // a drain asked while this is in the log waits for what it brings (answered at a flush)
    this.link.holdDrain();
    const answered = (): void => {
      this.acquiring--;
      // the credit it held back is used (messages sent) or unused again: either way Q's gap grew
      this.requested -= want;
      consumers.demandFreed(this.queue);
      this.link.releaseDrain();
      if (this.link.drainPending) this.host.scheduleFlush();
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
}
