/**
 * A session: channel mapping, transfer windows (spec 2.5.6), delivery-id allocation, handle
 * allocation and link dispatch, disposition batching.
 */
import type {
  AmqpErrorBody,
  Attach,
  Begin,
  DeliveryState,
  Detach,
  Disposition,
  Flow,
  Performative,
  Transfer,
} from './codec-port.js';
import { Condition, serialDiff } from './conditions.js';
import type { ProtocolConnection } from './connection.js';
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import { DispositionBatcher } from './dispositions.js';
import type { Link, LinkOptions } from './link.js';
import { ReceiverLink } from './receiver.js';
import { SenderLink } from './sender.js';
import type { BeginOptions } from './types.js';
import { UnsettledWindow } from './unsettled-window.js';

/** begin-sent: ours out, the peer's not in; mapped: both; end-sent: ours out; ended: both. */
export type SessionState = 'begin-sent' | 'mapped' | 'end-sent' | 'ended';

const UINT_MAX = 0xffffffff;
/** Bytes a transfer frame needs besides its payload (frame header + worst-case performative). */
const TRANSFER_OVERHEAD = 128;

export class Session {
  state: SessionState;
  /** The peer's channel for this session (-1 until its begin arrives). */
  remoteChannel = -1;
  local: Begin;
  remote: Begin | undefined = undefined;
  error: AmqpErrorBody | undefined = undefined;
  context: unknown = undefined;

  // transfer-id bookkeeping (2.5.6)
  nextOutgoingId = 0;
  nextIncomingId = 0;
  /** Transfers we can still accept before the peer must wait for our flow. */
  incomingWindow: number;
  readonly maxIncomingWindow: number;
  remoteIncomingWindow = 0;
  remoteOutgoingWindow = 0;
  readonly handleMax: number;
  remoteHandleMax = UINT_MAX;
  private nextDeliveryId = 0;

  private readonly links: (Link | undefined)[] = [];
  private readonly remoteLinks = new Map<number, Link>();
  private readonly pendingAttach = new Map<string, Link>();
  private readonly outgoing = new UnsettledWindow<OutgoingDelivery>();
  /** the same window as outgoing: no map entry (and table churn) per received delivery */
  private readonly incoming = new UnsettledWindow<IncomingDelivery>();
  private readonly dispositions = new DispositionBatcher();
  private readonly flowLinks = new Set<Link>();
  private windowDirty = false;
  private echoRequested = false;
  /** our echo flow was written and no session flow has come back since */
  private echoPending = false;
  /** @internal set while queued in the connection's dirty list */
  dirty = false;
  private blocked: SenderLink[] = [];

  constructor(
    readonly conn: ProtocolConnection,
    readonly channel: number,
    opts: BeginOptions,
    remote?: { channel: number; begin: Begin },
  ) {
    this.maxIncomingWindow = opts.incomingWindow ?? conn.defaultIncomingWindow;
    this.incomingWindow = this.maxIncomingWindow;
    this.handleMax = opts.handleMax ?? 1023;
    const b: Begin = {
      nextOutgoingId: 0,
      incomingWindow: this.incomingWindow,
      outgoingWindow: opts.outgoingWindow ?? UINT_MAX,
      handleMax: this.handleMax,
    };
    if (remote) b.remoteChannel = remote.channel;
    if (opts.offeredCapabilities) b.offeredCapabilities = opts.offeredCapabilities;
    if (opts.desiredCapabilities) b.desiredCapabilities = opts.desiredCapabilities;
    if (opts.properties) b.properties = opts.properties;
    this.local = b;
    this.state = 'begin-sent';
    if (remote) this.onRemoteBegin(remote.channel, remote.begin);
    conn.writeFrame(channel, { type: 'begin', body: b });
  }

  get isOpen(): boolean {
    return this.state === 'mapped';
  }

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

  /** End the session (optionally with an error). */
  end(error?: AmqpErrorBody): void {
    if (this.state !== 'mapped' && this.state !== 'begin-sent') return;
    this.flush();
    if (error) this.error = error;
    this.state = 'end-sent';
    this.conn.writeFrame(this.channel, { type: 'end', body: error ? { error } : {} });
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

  /** The lowest handle no link uses (within both handle-max values), or undefined. */
  private unusedHandle(): number | undefined {
    const max = Math.min(this.handleMax, this.remoteHandleMax);
    for (let h = 0; h <= max; h++) if (this.links[h] === undefined) return h;
    return undefined;
  }

  // ---- used by links ----

  /** @internal */
  canTransfer(): boolean {
    return this.state === 'mapped' && this.remoteIncomingWindow > 0 && this.conn.canTransfer;
  }
  /** @internal */
  blockOnWindow(link: SenderLink): void {
    if (!this.blocked.includes(link)) this.blocked.push(link);
  }
  /** @internal */
  maxTransferPayload(): number {
    return this.conn.outgoingMaxFrameSize - TRANSFER_OVERHEAD;
  }
  /** @internal */
  allocDeliveryId(): number {
    const id = this.nextDeliveryId;
    this.nextDeliveryId = (id + 1) >>> 0;
    return id;
  }
  /** @internal */
  trackOutgoing(d: OutgoingDelivery): void {
    this.outgoing.add(d);
  }
  /** @internal */
  untrackOutgoing(d: OutgoingDelivery): void {
    if (d.id >= 0) this.outgoing.delete(d);
  }
  /** @internal */
  trackIncoming(d: IncomingDelivery): void {
    this.incoming.add(d);
  }
  /** @internal */
  untrackIncoming(d: IncomingDelivery): void {
    this.incoming.delete(d);
  }
  /** @internal */
  queueDisposition(role: boolean, id: number, state: DeliveryState | undefined, settled: boolean): void {
    this.dispositions.add(role, id, state, settled);
    this.conn.markDirty(this);
  }
  /** @internal */
  markFlow(link: Link): void {
    this.flowLinks.add(link);
    this.conn.markDirty(this);
  }
  /** Nothing may follow our End on this channel. */
  private get writable(): boolean {
    return this.state === 'mapped' || this.state === 'begin-sent';
  }

  /** @internal */
  writeAttach(a: Attach): void {
    if (!this.writable) return;
    this.conn.writeFrame(this.channel, { type: 'attach', body: a });
  }
  /** @internal */
  writeDetach(link: Link, closed: boolean, error?: AmqpErrorBody): void {
    if (!this.writable) return;
    this.flush();
    const d: Detach = { handle: link.handle };
    if (closed) d.closed = true;
    if (error) d.error = error;
    this.conn.writeFrame(this.channel, { type: 'detach', body: d });
  }
  /** @internal */
  writeTransfer(t: Transfer, payload: Uint8Array): void {
    if (this.state !== 'mapped') return;
    this.nextOutgoingId = (this.nextOutgoingId + 1) >>> 0;
    this.remoteIncomingWindow--;
    this.conn.writeFrame(this.channel, { type: 'transfer', body: t }, payload);
  }

  /** @internal the first (or only) transfer of a delivery without a delivery state (connection.ts writeDeliveryStart). */
  writeDeliveryStart(handle: number, d: OutgoingDelivery, more: boolean, payload: Uint8Array): void {
    if (this.state !== 'mapped') return;
    this.nextOutgoingId = (this.nextOutgoingId + 1) >>> 0;
    this.remoteIncomingWindow--;
    this.conn.writeDeliveryStart(this.channel, handle, d, more, payload);
  }

  /** @internal write pending dispositions and flows. */
  flush(): void {
    this.dirty = false;
    if (this.state !== 'mapped') {
      if (this.state !== 'begin-sent') {
        this.dispositions.take(); // the session is gone: nobody to tell
        this.flowLinks.clear();
      }
      return;
    }
    if (this.dispositions.size > 0) {
      for (const body of this.dispositions.take()) {
        this.conn.writeFrame(this.channel, { type: 'disposition', body });
      }
    }
    if (this.flowLinks.size > 0) {
      const links = [...this.flowLinks];
      this.flowLinks.clear();
      for (const link of links) {
        if (link.state !== 'attached') continue;
        const f = this.sessionFlow();
        link.fillFlow(f);
        this.conn.writeFrame(this.channel, { type: 'flow', body: f });
      }
      this.windowDirty = false;
    }
    if (this.windowDirty || this.echoRequested) {
      this.windowDirty = false;
      const flow = this.sessionFlow();
      if (this.echoRequested) {
        flow.echo = true;
        this.echoPending = true;
      }
      this.echoRequested = false;
      this.conn.writeFrame(this.channel, { type: 'flow', body: flow });
    }
  }

  private sessionFlow(): Flow {
    this.incomingWindow = this.maxIncomingWindow;
    return {
      nextIncomingId: this.nextIncomingId,
      incomingWindow: this.incomingWindow,
      nextOutgoingId: this.nextOutgoingId,
      outgoingWindow: this.local.outgoingWindow,
    };
  }

  // ---- incoming frames ----

  /** @internal */
  onRemoteBegin(remoteChannel: number, b: Begin): void {
    this.remote = b;
    this.remoteChannel = remoteChannel;
    this.nextIncomingId = b.nextOutgoingId;
    this.remoteIncomingWindow = b.incomingWindow;
    this.remoteOutgoingWindow = b.outgoingWindow;
    if (b.handleMax !== undefined) this.remoteHandleMax = b.handleMax;
    if (this.state === 'begin-sent') this.state = 'mapped';
  }

  /** @internal a frame on this session's channel (begin is handled by the connection). */
  onFrame(p: Performative, payload: Uint8Array | undefined): void {
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
  private failSession(condition: string, description: string): void {
    this.conn.reportError('session', condition, description, { session: this });
    this.end({ condition, description });
  }

  private onTransfer(t: Transfer, payload: Uint8Array | undefined): void {
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

  private onFlow(f: Flow): void {
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

  private onAttach(a: Attach): void {
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

  private onDetach(d: Detach): void {
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

  private onEnd(error: AmqpErrorBody | undefined): void {
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
