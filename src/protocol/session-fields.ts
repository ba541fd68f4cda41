/**
 * The ground floor of a session (session.ts): every field it is made of, in one place so the
 * object keeps one shape, the constructor that writes our Begin, and the peer's Begin mapped
 * onto it. Split from the link-facing writing side (session-output.ts), the frame handlers
 * (session-input.ts) and the API (session.ts) so each file has one job; a class chain, not
 * helpers, so the per-transfer paths stay plain method calls on one object.
 */
import type { AmqpErrorBody, Begin } from './codec-port.js';
import type { ProtocolConnection } from './connection.js';
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import { DispositionBatcher } from './dispositions.js';
import type { Link } from './link.js';
import type { SenderLink } from './sender.js';
import type { BeginOptions } from './types.js';
import { UnsettledWindow } from './unsettled-window.js';

/** begin-sent: ours out, the peer's not in; mapped: both; end-sent: ours out; ended: both. */
export type SessionState = 'begin-sent' | 'mapped' | 'end-sent' | 'ended';

const UINT_MAX = 0xffffffff;

export abstract class SessionFields {
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
  protected nextDeliveryId = 0;

  protected readonly links: (Link | undefined)[] = [];
  protected readonly remoteLinks = new Map<number, Link>();
  protected readonly pendingAttach = new Map<string, Link>();
  protected readonly outgoing = new UnsettledWindow<OutgoingDelivery>();
  /** the same window as outgoing: no map entry (and table churn) per received delivery */
  protected readonly incoming = new UnsettledWindow<IncomingDelivery>();
  protected readonly dispositions = new DispositionBatcher();
  protected readonly flowLinks = new Set<Link>();
  protected windowDirty = false;
  protected echoRequested = false;
  /** our echo flow was written and no session flow has come back since */
  protected echoPending = false;
  /** @internal set while queued in the connection's dirty list */
  dirty = false;
  protected blocked: SenderLink[] = [];

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
}
