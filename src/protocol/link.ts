/**
 * What sender and receiver links share: identity, attach/detach state machine, handles.
 */
import type { AmqpErrorBody, Attach, Coordinator, Fields, Flow, Source, Target } from './codec-port.js';
import type { Session } from './session.js';

export type SndSettleMode = 0 | 1 | 2; // unsettled | settled | mixed
export type RcvSettleMode = 0 | 1; // first | second

/** Options for attaching a link (ours) or answering a peer's attach (accept). */
export interface LinkOptions {
  name: string;
  source?: Source;
  target?: Target | Coordinator;
  sndSettleMode?: SndSettleMode;
  rcvSettleMode?: RcvSettleMode;
  /** Largest message we accept (receiver) / declare (sender). 0 or absent: no limit declared. */
  maxMessageSize?: number;
  /** Sender only: initial delivery-count. Default 0. */
  initialDeliveryCount?: number;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}

export type AcceptOptions = Omit<LinkOptions, 'name'>;

/**
 * attach-sent: our attach is out, the peer's not in yet;
 * attach-received: the peer attached first (server role), waiting for accept()/refuse();
 * attached: both attaches exchanged;
 * detach-sent: our detach is out; detached: both detaches exchanged (or the session ended).
 */
export type LinkState = 'attach-sent' | 'attach-received' | 'attached' | 'detach-sent' | 'detached';

export abstract class Link {
  abstract readonly role: 'sender' | 'receiver';
  state: LinkState;
  /** The peer's handle for this link (-1 until its attach arrives). */
  remoteHandle = -1;
  /** Our attach, once sent. */
  local: Attach | undefined = undefined;
  /** The peer's attach, once received. */
  remote: Attach | undefined = undefined;
  /** delivery-count per spec 2.6.7 (sender: ours; receiver: our view of the sender's). */
  deliveryCount = 0;
  /** link-credit per spec 2.6.7. */
  credit = 0;
  /** The error we detached with, or the peer's. */
  error: AmqpErrorBody | undefined = undefined;
  /** Opaque slot for the engine's user. */
  context: unknown = undefined;
  /** @internal a flow that arrived (pipelined) before we answered the peer's attach */
  pendingFlow: Flow | undefined = undefined;

  constructor(
    readonly session: Session,
    readonly name: string,
    /** Our handle for this link. */
    readonly handle: number,
    state: LinkState,
  ) {
    this.state = state;
  }

  /** Our End is out (or both are): the link stays as it is until the session's end event. */
  private get sessionGone(): boolean {
    return this.session.state === 'end-sent' || this.session.state === 'ended';
  }

  get isSender(): boolean {
    return this.role === 'sender';
  }

  /** Build and send our attach (used for both initiating and accepting). */
  protected sendAttach(opts: AcceptOptions, name: string): void {
    const a: Attach = { name, handle: this.handle, role: this.role === 'receiver' };
    if (opts.sndSettleMode !== undefined) a.sndSettleMode = opts.sndSettleMode;
    if (opts.rcvSettleMode !== undefined) a.rcvSettleMode = opts.rcvSettleMode;
    if (opts.source !== undefined) a.source = opts.source;
    if (opts.target !== undefined) a.target = opts.target;
    if (this.role === 'sender') a.initialDeliveryCount = opts.initialDeliveryCount ?? 0;
    if (opts.maxMessageSize) a.maxMessageSize = opts.maxMessageSize;
    if (opts.offeredCapabilities) a.offeredCapabilities = opts.offeredCapabilities;
    if (opts.desiredCapabilities) a.desiredCapabilities = opts.desiredCapabilities;
    if (opts.properties) a.properties = opts.properties;
    this.local = a;
    this.onLocalAttach(a);
    this.session.writeAttach(a);
  }

  /** Server role: answer a peer's attach (attach-request event). */
  accept(opts: AcceptOptions = {}): void {
    // the peer may have detached already (events are handled after the input that caused them)
    if (this.state === 'detached' || this.state === 'detach-sent') return;
    // the session may have ended since the request (e.g. a handle-in-use End): no frames after End
    if (this.sessionGone) return;
    if (this.state !== 'attach-received') throw new Error(`accept() on a link in state ${this.state}`);
    this.state = 'attached';
    this.sendAttach(opts, this.name);
    this.onAttached();
    const f = this.pendingFlow;
    if (f) {
      this.pendingFlow = undefined;
      this.onFlow(f);
    }
  }

  /**
   * Refuse a peer's attach per spec 2.6.3: attach with a null terminus on our side, then detach
   * (closed) with the error.
   */
  refuse(error: AmqpErrorBody): void {
    if (this.state === 'detached' || this.state === 'detach-sent') return;
    if (this.sessionGone) return;
    if (this.state !== 'attach-received') throw new Error(`refuse() on a link in state ${this.state}`);
    const r = this.remote!;
    // the peer's sender wants our target: leave it null; the peer's receiver wants our source
    const opts: AcceptOptions = r.role ? { target: r.target } : { source: r.source };
    this.state = 'attached';
    this.sendAttach(opts, this.name);
    this.detach(error, true);
  }

  /** Detach (closed = true: close the link for good). */
  detach(error?: AmqpErrorBody, closed = true): void {
    if (this.state === 'attach-received') {
      this.refuse(error ?? { condition: 'amqp:link:detach-forced', description: 'link refused' });
      return;
    }
    if (this.state !== 'attached' && this.state !== 'attach-sent') return;
    this.state = 'detach-sent';
    if (error) this.error = error;
    this.session.writeDetach(this, closed, error);
    this.onDetached();
  }

  /** @internal the peer's attach arrived (answer to ours or a new request). */
  onRemoteAttach(a: Attach): void {
    this.remote = a;
    this.remoteHandle = a.handle;
    if (this.state === 'attach-sent') {
      this.state = 'attached';
      this.onAttached();
    }
  }

  /** @internal called once with our attach before it is written. */
  protected onLocalAttach(_a: Attach): void {}
  /** @internal called when both attaches are exchanged. */
  protected onAttached(): void {}
  /** @internal called when we leave the attached state. */
  onDetached(): void {}
  /** @internal the peer's flow for this link. */
  abstract onFlow(flow: Flow): void;
  /** @internal fills the link part of a flow frame we send; false: nothing to send for this link now. */
  abstract fillFlow(flow: Flow): boolean;
}
