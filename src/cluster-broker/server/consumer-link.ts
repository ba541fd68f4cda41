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
 *
 * This file is its lifecycle (register, steal, close); the class is a chain, one job per file:
 * consumer-link-fields.ts (every field, the constructor), consumer-link-settle.ts (outcomes to
 * settle events) and consumer-link-acquire.ts (credit to acquire events, sending).
 */
import { ConsumerLinkAcquire } from './consumer-link-acquire.js';
import type { RegisteredConsumer } from './context.js';
import type { LinkHandler } from './link-host.js';

/**
 * How long what a link held unsettled waits for that link when it went away, for a receiver that
 * asked (`quorate:hold-unsettled`, docs/delivery-contract.md#held-unsettled): long enough for a
 * client to fail over and re-attach, short of the client's ten-minute dedup memory.
 */
export const HOLD_UNSETTLED_MS = 60_000;

export class ConsumerLink extends ConsumerLinkAcquire implements LinkHandler, RegisteredConsumer {
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
}
