/** A receiver attached to a virtual source: the provider pushes pre-settled messages. */
import type { AmqpErrorBody } from '../../codec/index.js';
import type { SenderLink } from '../../protocol/index.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import type { VirtualSource, VirtualSourceSink } from './virtual-source.js';

/**
 * Messages one virtual link holds while its receiver grants no credit, at most: a receiver that
 * reads nothing cannot make the broker hold an unbounded number. A push beyond detaches the link
 * with amqp:resource-limit-exceeded (its description says to grant credit), so nothing is dropped
 * without a word (docs/membership.md#feed-credit, docs/management.md#back-pressure).
 */
export const MAX_WAITING_FOR_CREDIT = 64;

export class VirtualLink implements LinkHandler, VirtualSourceSink {
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  private tagCounter = 0;

  constructor(
    private readonly host: LinkHost,
    private readonly link: SenderLink,
  ) {}

  start(source: VirtualSource, address: string): void {
    try {
      this.unsubscribe = source.subscribe(this, {
        address,
        containerId: this.host.containerId,
        linkName: this.link.name,
      });
    } catch (err) {
      this.close({
        condition: 'amqp:internal-error',
        description: `virtual source ${address}: ${String(err)}`,
      });
    }
  }

  /** Messages sent but waiting for the receiver's credit. */
  get queued(): number {
    return this.link.queued;
  }

  get open(): boolean {
    return !this.closed && this.link.state === 'attached';
  }

  send(message: Uint8Array): void {
    if (!this.open) return;
    if (this.link.queued >= MAX_WAITING_FOR_CREDIT) {
      this.close({
        condition: 'amqp:resource-limit-exceeded',
        description: `${MAX_WAITING_FOR_CREDIT} messages wait for credit on the receiver '${this.link.name}': grant it credit`,
      });
      return;
    }
    const tag = new Uint8Array(4);
    new DataView(tag.buffer).setUint32(0, this.tagCounter++ >>> 0);
    this.link.send(tag, message, { settled: true });
    this.host.ctx.counters.messagesOut++;
    this.host.scheduleFlush();
  }

  /** Provider side: detach the link; connection side (no error): the link is gone. */
  close(error?: AmqpErrorBody): void {
    if (this.closed) return;
    this.closed = true;
    if (this.link.state === 'attached') {
      this.link.detach(error);
      this.host.scheduleFlush();
    }
    const u = this.unsubscribe;
    this.unsubscribe = undefined;
    u?.();
  }
}
