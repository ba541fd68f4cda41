/**
 * A browser's link (distribution-mode `copy`, docs/broker-features.md#browsing): it is sent copies
 * of the queue's available messages in seq order, each once, and nothing is acquired, so every
 * message stays for the queue's consumers.
 *
 * It reads this member's own applied state and never submits an event: a browse changes nothing,
 * so it needs no log entry, and in a cluster any member serves it from what it has applied (it may
 * lag the leader by the entries not yet applied here). An outcome from the browser (Proton's
 * queue_browser auto-accepts) only settles the copy; the message in the queue is untouched.
 */
import type { OutgoingDelivery, SenderLink } from '../../protocol/index.js';
import type { Selector } from '../selector/index.js';
import type { RegisteredConsumer } from './context.js';
import { scopedLinkKey } from './identity.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { CongestionPause, DeliveryTags } from './outgoing-link.js';
import { rewriteHeader } from './rewrite-header.js';

/** Messages copied per look at the state at most (a huge credit is served in batches). */
const MAX_BROWSE_BATCH = 256;

export class BrowserLink implements LinkHandler, RegisteredConsumer {
  readonly key: string;
  private closed = false;
  /** The highest seq already copied to the browser: it sees each message once. */
  private lastSeq = 0;
  private readonly tags = new DeliveryTags();
  private readonly congestion: CongestionPause;

  constructor(
    private readonly host: LinkHost,
    private readonly link: SenderLink,
    readonly queue: string,
    /** snd-settle-mode settled: copies go pre-settled. */
    private readonly presettled: boolean,
    /** A JMS selector: only matching messages are copied. */
    private readonly selector?: Selector,
  ) {
    this.key = scopedLinkKey(host.user, host.containerId, link.name);
    link.autoSettle = false;
    this.congestion = new CongestionPause(host, () => this.pump());
  }

  /**
   * Starts copying. A browser is not registered as the queue's consumer (it neither steals nor
   * is stolen: browsing under a consumer's link name takes nothing from it); it only waits for
   * the queue's availability notices.
   */
  start(): void {
    this.pump();
  }

  get unusedCredit(): number {
    // a browser's credit is no demand for the queue's messages (federation moves none for it)
    return 0;
  }

  onCredit(): void {
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
    // never registered by key: nothing can steal it
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.host.ctx.consumers.unwait(this);
  }

  /** The browser's outcome for a copy: settled here, the queued message is not touched. */
  onUpdate(d: OutgoingDelivery): void {
    if (this.closed || d.settled) return;
    if (d.remoteState === undefined && !d.remoteSettled) return;
    d.settle();
    this.host.scheduleFlush();
  }

  private pump(): void {
    while (!this.closed && this.link.state === 'attached') {
      const room = Math.min(this.link.credit - this.link.queued, MAX_BROWSE_BATCH);
      if (room <= 0) return;
      if (this.congestion.holds()) return;
      const { backend, consumers } = this.host.ctx;
      const batch = backend.state.browseAvailable(this.queue, this.lastSeq, room);
      let sent = 0;
      for (const m of batch) {
        this.lastSeq = m.seq;
        if (this.selector !== undefined && !this.selector.matches(m.message)) continue;
        this.copy(m);
        sent++;
      }
      if (sent > 0) this.host.scheduleFlush();
      if (batch.length < room) {
        // seen everything there is: look again when the queue gets messages
        consumers.wait(this);
        if (this.link.drain) {
          this.link.completeDrain();
          this.host.scheduleFlush();
        }
        return;
      }
    }
  }

  private copy(m: { seq: number; message: Uint8Array; deliveryCount: number }): void {
    // never acquired by this link: not a first acquirer (spec 3.2.1)
    const bytes = rewriteHeader({
      seq: m.seq,
      queue: this.queue,
      message: m.message,
      deliveryCount: m.deliveryCount,
      firstAcquirer: false,
    });
    const max = this.link.remoteMaxMessageSize;
    if (max > 0 && bytes.length > max) return; // too large for this browser: skipped
    this.link.send(this.tags.next(), bytes, { settled: this.presettled });
    this.host.ctx.counters.messagesOut++;
  }
}
