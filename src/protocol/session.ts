/**
 * A session: channel mapping, transfer windows (spec 2.5.6), delivery-id allocation, handle
 * allocation and link dispatch, disposition batching. This file is its API (attach links, end,
 * what is unsettled, probes); the class is a chain, one job per file, so the per-transfer paths
 * stay plain method calls on one object: session-fields.ts (every field, the constructor, the
 * peer's Begin), session-output.ts (what links call, the frames written, the flush) and
 * session-input.ts (the frames read).
 */
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import type { Link, LinkOptions } from './link.js';
import { ReceiverLink } from './receiver.js';
import { SenderLink } from './sender.js';
import { SessionInput } from './session-input.js';

export type { SessionState } from './session-fields.js';

export class Session extends SessionInput {
  /** Attach a sending link. Transfers go out once the peer attached and granted credit. */
  attachSender(opts: LinkOptions): SenderLink {
    const link = new SenderLink(this, opts.name, this.allocHandle(), 'attach-sent');
    this.startAttach(link, opts);
    return link;
  }

  /** Attach a receiving link. Grant credit with link.flow(n). */
  attachReceiver(opts: LinkOptions): ReceiverLink {
    const link = new ReceiverLink(this, opts.name, this.allocHandle(), 'attach-sent');
    this.startAttach(link, opts);
    return link;
  }

  /** Outgoing deliveries written and not yet settled (oldest first), e.g. for failover replay. */
  unsettledOutgoing(link?: Link): OutgoingDelivery[] {
    const out: OutgoingDelivery[] = [];
    for (const d of this.outgoing.values()) if (!link || d.link === link) out.push(d);
    return out;
  }

  /**
   * Whether the peer owes this session an answer: a written delivery not yet settled, or a
   * receiving link with credit whose sender said it holds messages.
   */
  awaitingPeer(): boolean {
    if (this.state !== 'mapped') return false;
    if (this.outgoing.size > 0) return true;
    for (const link of this.links)
      if (
        link instanceof ReceiverLink &&
        link.state === 'attached' &&
        link.credit > 0 &&
        link.remoteAvailable > 0
      )
        return true;
    return false;
  }

  /** Ask the peer for its session flow state (a flow with `echo`): it must answer with a flow. */
  requestEcho(): boolean {
    if (this.state !== 'mapped') return false;
    this.echoRequested = true;
    this.conn.markDirty(this);
    return true;
  }

  /** Incoming deliveries not yet settled (oldest first). */
  unsettledIncoming(link?: Link): IncomingDelivery[] {
    const out: IncomingDelivery[] = [];
    for (const d of this.incoming.values()) if (!link || d.link === link) out.push(d);
    return out;
  }

  /** Every link of this session that is not fully detached. */
  activeLinks(): Link[] {
    return this.links.filter((l): l is Link => l !== undefined);
  }

  private startAttach(link: Link, opts: LinkOptions): void {
    if (this.state !== 'mapped' && this.state !== 'begin-sent')
      throw new Error(`attach on session in state ${this.state}`);
    this.links[link.handle] = link;
    this.pendingAttach.set((link.isSender ? 's' : 'r') + opts.name, link);
    (link as unknown as { sendAttach(o: LinkOptions, n: string): void }).sendAttach(opts, opts.name);
  }

  private allocHandle(): number {
    const h = this.unusedHandle();
    if (h === undefined) throw new Error('no free link handle (handle-max reached)');
    return h;
  }
}
