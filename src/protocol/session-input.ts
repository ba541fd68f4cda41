/**
 * A session's reading side (session.ts): the frames on its channel dispatched (transfer,
 * disposition, flow, attach, detach, end), the transfer window checked, links of the peer's
 * attaches created, session-level violations answered with an End. Split from the fields
 * (session-fields.ts), the writing side (session-output.ts) and the API (session.ts).
 */
import type {
  AmqpErrorBody,
  Attach,
  DeliveryState,
  Detach,
  Disposition,
  Flow,
  Performative,
  Transfer,
} from './codec-port.js';
import { Condition, serialDiff } from './conditions.js';
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import type { Link } from './link.js';
import { ReceiverLink } from './receiver.js';
import { SenderLink } from './sender.js';
import type { Session } from './session.js';
import { SessionOutput } from './session-output.js';
import type { UnsettledWindow } from './unsettled-window.js';

export abstract class SessionInput extends SessionOutput {
  /** The lowest handle no link uses (within both handle-max values), or undefined. */
  protected unusedHandle(): number | undefined {
    const max = Math.min(this.handleMax, this.remoteHandleMax);
    for (let h = 0; h <= max; h++) if (this.links[h] === undefined) return h;
    return undefined;
  }

  /** @internal a frame on this session's channel (begin is handled by the connection). */
  onFrame(this: Session, p: Performative, payload: Uint8Array | undefined): void {
    if (this.state === 'end-sent' || this.state === 'ended') {
      if (p.type === 'end') this.onEnd(p.body.error);
      return;
    }
    switch (p.type) {
      case 'transfer':
        this.onTransfer(p.body, payload);
        return;
      case 'disposition':
        this.onDisposition(p.body);
        return;
      case 'flow':
        this.onFlow(p.body);
        return;
      case 'attach':
        this.onAttach(p.body);
        return;
      case 'detach':
        this.onDetach(p.body);
        return;
      case 'end':
        this.onEnd(p.body.error);
        return;
      default:
        this.conn.fail(Condition.illegalState, `unexpected ${p.type} on channel ${this.remoteChannel}`);
    }
  }

  /** End the session because the peer broke a session-level rule. */
  private failSession(this: Session, condition: string, description: string): void {
    this.conn.reportError('session', condition, description, { session: this });
    this.end({ condition, description });
  }

  private onTransfer(this: Session, t: Transfer, payload: Uint8Array | undefined): void {
    if (this.incomingWindow <= 0) {
      this.failSession(Condition.windowViolation, 'transfer beyond the incoming-window');
      return;
    }
    this.nextIncomingId = (this.nextIncomingId + 1) >>> 0;
    this.remoteOutgoingWindow--;
    // the refill takes effect when our flow is written (sessionFlow), not before: a peer that
    // overruns the window it was told about is in violation even if a refill is pending
    if (--this.incomingWindow <= this.maxIncomingWindow >>> 1 && !this.windowDirty) {
      this.windowDirty = true;
      this.conn.markDirty(this);
    }
    const link = this.remoteLinks.get(t.handle);
    if (!link) {
      this.failSession(Condition.unattachedHandle, `transfer on unattached handle ${t.handle}`);
      return;
    }
    if (link.role !== 'receiver') {
      this.failSession(Condition.errantLink, `transfer for our sending link '${link.name}'`);
      return;
    }
    (link as ReceiverLink).onTransfer(t, payload);
  }

  private onDisposition(d: Disposition): void {
    const first = d.first;
    const last = d.last ?? first;
    const count = serialDiff(last, first) + 1;
    if (count <= 0) return;
    const settled = d.settled === true;
    const state = d.state;
    if (count === 1) {
      const del = (d.role ? this.outgoing : this.incoming).get(first);
      if (del) this.applyDisposition(del, state, settled);
      return;
    }
    // a range walks the window's slice, no lookup per id
    const window: UnsettledWindow<OutgoingDelivery | IncomingDelivery> = d.role
      ? this.outgoing
      : this.incoming;
    window.forRange(first, last, (del) => this.applyDisposition(del, state, settled));
  }

  private applyDisposition(
    del: OutgoingDelivery | IncomingDelivery,
    state: DeliveryState | undefined,
    settled: boolean,
  ): void {
    if (del.link.isSender) (del.link as SenderLink).onDisposition(del as OutgoingDelivery, state, settled);
    else (del.link as ReceiverLink).onDisposition(del as IncomingDelivery, state, settled);
    this.conn.emit({ type: 'delivery-update', delivery: del });
  }

  private onFlow(this: Session, f: Flow): void {
    const nextIncoming = f.nextIncomingId ?? this.local.nextOutgoingId;
    this.remoteIncomingWindow = Math.max(0, f.incomingWindow + serialDiff(nextIncoming, this.nextOutgoingId));
    this.remoteOutgoingWindow = f.outgoingWindow;
    if (f.handle !== undefined) {
      const link = this.remoteLinks.get(f.handle);
      if (!link) {
        this.failSession(Condition.unattachedHandle, `flow on unattached handle ${f.handle}`);
        return;
      }
      if (link.state === 'attached') link.onFlow(f);
      else if (link.state === 'attach-received') link.pendingFlow = f; // applied on accept()
    } else {
      // a session flow after our echo: the peer answers probes (RabbitMQ 3.10 does not)
      if (this.echoPending) this.conn.echoAnswered = true;
      this.echoPending = false;
      if (f.echo) {
        this.windowDirty = true;
        this.conn.markDirty(this);
      }
    }
    if (this.blocked.length > 0 && this.remoteIncomingWindow > 0) {
      const blocked = this.blocked;
      this.blocked = [];
      for (const l of blocked) l.pump();
    }
  }

  private onAttach(this: Session, a: Attach): void {
    if (a.handle > this.handleMax) {
      this.conn.fail(Condition.framingError, `attach handle ${a.handle} above handle-max ${this.handleMax}`);
      return;
    }
    if (this.remoteLinks.has(a.handle)) {
      this.failSession(Condition.handleInUse, `handle ${a.handle} is already attached`);
      return;
    }
    // the peer's receiver (role true) pairs with our sender
    const key = (a.role ? 's' : 'r') + a.name;
    const mine = this.pendingAttach.get(key);
    if (mine) {
      this.pendingAttach.delete(key);
      this.remoteLinks.set(a.handle, mine);
      mine.onRemoteAttach(a);
      // (a link we detached before the answer came just waits for the peer's detach)
      if (mine.state === 'attached') this.conn.emit({ type: 'link-attached', link: mine, attach: a });
      return;
    }
    const handle = this.unusedHandle();
    if (handle === undefined) {
      this.failSession(Condition.resourceLimitExceeded, 'no free link handle');
      return;
    }
    const link: Link = a.role
      ? new SenderLink(this, a.name, handle, 'attach-received')
      : new ReceiverLink(this, a.name, handle, 'attach-received');
    this.links[handle] = link;
    this.remoteLinks.set(a.handle, link);
    link.onRemoteAttach(a);
    this.conn.emit({ type: 'attach-request', link, attach: a });
  }

  private onDetach(this: Session, d: Detach): void {
    const link = this.remoteLinks.get(d.handle);
    if (!link) {
      this.failSession(Condition.unattachedHandle, `detach on unattached handle ${d.handle}`);
      return;
    }
    this.remoteLinks.delete(d.handle);
    const byPeer = link.state !== 'detach-sent';
    if (byPeer) {
      if (link.state === 'attach-received') {
        // never answered: answer with an attach first so our detach is well-formed
        this.writeAttach({ name: link.name, handle: link.handle, role: link.role === 'receiver' });
        link.state = 'attached';
      }
      link.detach(undefined, d.closed === true);
      if (d.error) link.error = d.error;
    }
    link.state = 'detached';
    this.links[link.handle] = undefined;
    this.forgetDeliveries(link);
    this.conn.emit({ type: 'link-detached', link, error: d.error, closed: d.closed === true, byPeer });
  }

  /**
   * A detached link's unsettled deliveries are forgotten (we never resume links: reattaching
   * starts with a null unsettled map), so a long-lived session that keeps re-attaching links
   * does not grow without bound. A late disposition for a forgotten id is ignored.
   */
  private forgetDeliveries(link: Link): void {
    this.outgoing.deleteWhere((d) => d.link === link);
    this.incoming.deleteWhere((d) => d.link === link);
  }

  private onEnd(this: Session, error: AmqpErrorBody | undefined): void {
    const byPeer = this.state !== 'end-sent';
    if (byPeer) {
      if (error) this.error = error;
      this.end();
    }
    this.state = 'ended';
    this.conn.freeChannel(this);
    for (const link of this.links) {
      if (!link || link.state === 'detached') continue;
      link.state = 'detached';
      link.onDetached();
      this.conn.emit({ type: 'link-detached', link, error: error ?? this.error, closed: false, byPeer });
    }
    this.links.length = 0;
    this.remoteLinks.clear();
    this.outgoing.clear();
    this.incoming.clear();
    this.conn.emit({ type: 'session-end', session: this, error: error ?? this.error, byPeer });
  }

  /** @internal the connection closed under us: forget everything, no frames. */
  onConnectionGone(): void {
    this.state = 'ended';
    this.blocked = [];
    this.flowLinks.clear();
  }
}
