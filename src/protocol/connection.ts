/**
 * The sans-I/O AMQP 1.0 connection engine, for both roles.
 *
 * Drive it with bytes and time; drain bytes and events:
 *   engine.receive(chunk, nowMs)   // bytes from the socket, split anywhere
 *   engine.tick(nowMs)             // heartbeats / idle timeout; call again by engine.nextDeadline()
 *   engine.pollEvents()            // typed events (handle them before takeOutput: handlers may send)
 *   engine.takeOutput()            // Uint8Array[] to write with one writev
 * API calls (begin, attach, send, flow, disposition, close) append output; nothing is written
 * to any socket and no clock is read here.
 */
import {
  type AmqpErrorBody,
  type Begin,
  type DeliveryStart,
  type EncodedHead,
  encodeAmqpFrame,
  encodeAmqpFrameHead,
  encodeHeartbeat,
  encodeProtocolHeader,
  encodeTransferHead,
  type Frame,
  FrameReader,
  MIN_MAX_FRAME_SIZE,
  type Open,
  type Performative,
  type Transfer,
} from './codec-port.js';
import { Condition } from './conditions.js';
import { type FrameTrace, frameTraceFor } from './frame-trace.js';
import { Handshake, type HeaderFrame, type Phase } from './handshake.js';
import type { Link } from './link.js';
import { COPY_LIMIT, coalesceSmall, FrameOutput } from './output.js';
import { Session } from './session.js';
import type { BeginOptions, ConnectionState, EngineEvent, EngineOptions, Role } from './types.js';

const UINT_MAX = 0xffffffff;
const NO_OUTPUT: Uint8Array[] = Object.freeze([]) as unknown as Uint8Array[];
const NO_EVENTS: EngineEvent[] = Object.freeze([]) as unknown as EngineEvent[];

export class ProtocolConnection {
  readonly role: Role;
  state: ConnectionState = 'start';
  readonly localOpen: Open;
  remoteOpen: Open | undefined = undefined;
  /** The error that closed (or is closing) the connection, ours or the peer's. */
  error: AmqpErrorBody | undefined = undefined;
  /** Largest frame we write (the peer's max-frame-size, capped by ours). 512 until Open. */
  outgoingMaxFrameSize = MIN_MAX_FRAME_SIZE;
  readonly defaultIncomingWindow: number;
  readonly defaultMaxMessageSize: number;
  context: unknown = undefined;

  private readonly opts: EngineOptions;
  private readonly traceFrame: FrameTrace | undefined;
  private readonly reader: FrameReader;
  private phase: Phase = 'header';
  private readonly handshake: Handshake;
  private readonly out = new FrameOutput();
  /** Client: frames written while SASL is still in progress, sent right after our Open. */
  private beforeOpen: Uint8Array[] = [];
  private events: EngineEvent[] = [];
  private now: number;
  private lastReceived: number;
  private lastSent: number;
  private openSent = false;
  private readonly localIdle: number;
  private remoteIdle = 0;
  private readonly localChannelMax: number;
  private remoteChannelMax = 65535;
  private readonly sessions: (Session | undefined)[] = [];
  private readonly remoteSessions = new Map<number, Session>();
  private dirty: Session[] = [];

  constructor(opts: EngineOptions) {
    this.opts = opts;
    this.traceFrame = frameTraceFor(opts.logger);
    this.role = opts.role;
    this.now = opts.now ?? 0;
    this.lastReceived = this.now;
    this.lastSent = this.now;
    this.defaultIncomingWindow = opts.incomingWindow ?? 2048;
    this.defaultMaxMessageSize = opts.maxMessageSize ?? 64 * 1024 * 1024;
    const o = opts.open;
    this.localChannelMax = o.channelMax ?? 255;
    this.localIdle = o.idleTimeOut ?? 0;
    const open: Open = {
      containerId: o.containerId,
      maxFrameSize: o.maxFrameSize ?? 1024 * 1024,
      channelMax: this.localChannelMax,
    };
    if (o.hostname !== undefined) open.hostname = o.hostname;
    if (this.localIdle > 0) open.idleTimeOut = this.localIdle;
    if (o.offeredCapabilities) open.offeredCapabilities = o.offeredCapabilities;
    if (o.desiredCapabilities) open.desiredCapabilities = o.desiredCapabilities;
    if (o.properties) open.properties = o.properties;
    this.localOpen = open;
    // a trace may keep the frames it is shown; nothing else here keeps a transfer past its frame
    this.reader = new FrameReader({
      maxFrameSize: MIN_MAX_FRAME_SIZE,
      reuseTransferFrames: this.traceFrame === undefined,
    });
    this.reader.expectProtocolHeader();
    this.handshake = new Handshake({
      role: this.role,
      opts,
      reader: this.reader,
      hostname: o.hostname,
      getState: () => this.state,
      setState: (st) => {
        this.state = st;
      },
      getPhase: () => this.phase,
      setPhase: (ph) => {
        this.phase = ph;
      },
      push: (b) => {
        this.out.push(b);
      },
      emit: (e) => this.emit(e),
      terminate: (c, d) => this.terminate(c, d),
      sendAmqpHeaderAndOpen: () => this.sendAmqpHeaderAndOpen(),
      process: () => this.process(),
    });
    if (this.role === 'client') {
      if (this.handshake.clientUsesSasl) {
        this.state = 'sasl';
        this.out.push(encodeProtocolHeader(3));
      } else {
        this.sendAmqpHeaderAndOpen();
      }
    }
  }

  // ---------------------------------------------------------------- driving

  /** Feed bytes from the peer (split anywhere). `now` (ms) updates the clock if given. */
  receive(chunk: Uint8Array, now?: number): void {
    if (now !== undefined) this.now = now;
    if (this.state === 'closed' || chunk.length === 0) return;
    this.lastReceived = this.now;
    this.reader.push(chunk);
    this.process();
  }

  /**
   * The clock (ms) as of the last receive() or tick(): while the events of a read are handled,
   * when its bytes arrived. Reading it costs no clock call (the client's dedup window stamps
   * every delivery with it).
   */
  get clock(): number {
    return this.now;
  }

  /** Advance the clock: sends heartbeats, closes on the peer's silence. */
  tick(now: number): void {
    this.now = now;
    if (this.state !== 'open' && this.state !== 'opening') return;
    if (this.localIdle > 0 && this.openSent && now - this.lastReceived > this.localIdle) {
      const description = `no frame from the peer for ${Math.round(now - this.lastReceived)} ms (idle-time-out ${this.localIdle} ms)`;
      this.reportError('connection', Condition.resourceLimitExceeded, description);
      this.close({ condition: Condition.resourceLimitExceeded, description });
      // the peer is silent: do not wait for its Close
      this.finish(false);
      return;
    }
    if (this.remoteIdle > 0 && now - this.lastSent >= this.remoteIdle / 2) {
      this.traceFrame?.('out', 0, undefined, 0);
      this.out.push(encodeHeartbeat());
      this.lastSent = now;
    }
  }

  /** The time (ms) by which tick() should be called next, or undefined if no timer is needed. */
  nextDeadline(): number | undefined {
    if (this.state !== 'open' && this.state !== 'opening') return undefined;
    let t: number | undefined;
    if (this.localIdle > 0 && this.openSent) t = this.lastReceived + this.localIdle + 1;
    if (this.remoteIdle > 0) {
      const hb = this.lastSent + Math.floor(this.remoteIdle / 2);
      if (t === undefined || hb < t) t = hb;
    }
    return t;
  }

  /**
   * Bytes to write, in order (flushes batched dispositions and flows first). With `coalesce`,
   * runs of small frames are merged into one buffer (fewer writev entries); large payloads are
   * passed through uncopied.
   */
  takeOutput(coalesce = false): Uint8Array[] {
    if (this.dirty.length > 0) this.flushSessions();
    if (this.out.empty) return NO_OUTPUT;
    const out = this.out.take();
    return coalesce && out.length > 1 ? coalesceSmall(out) : out;
  }

  /** Events since the last poll, in order. */
  pollEvents(): EngineEvent[] {
    const ev = this.events;
    if (ev.length === 0) return NO_EVENTS;
    this.events = [];
    return ev;
  }

  /** True when takeOutput() or pollEvents() has something. */
  get hasPending(): boolean {
    return !this.out.empty || this.events.length > 0 || this.dirty.length > 0;
  }

  // ---------------------------------------------------------------- API

  /** Begin a session. Frames may be pipelined before the peer's Open arrives. */
  begin(opts: BeginOptions = {}): Session {
    const early = this.role === 'client' && this.state === 'sasl';
    if (!early && ((this.state !== 'open' && this.state !== 'opening') || !this.openSent)) {
      throw new Error(`begin() in state ${this.state}`);
    }
    const ch = this.unusedChannel();
    if (ch === undefined) throw new Error('no free channel (channel-max reached)');
    const s = new Session(this, ch, opts);
    this.sessions[ch] = s;
    return s;
  }

  /** Close the connection (optionally with an error). Further input is ignored except Close. */
  close(error?: AmqpErrorBody): void {
    if (this.state === 'closed' || this.state === 'close-sent') return;
    if (error) this.error = error;
    // an error before our Open: send Open then Close so the peer learns why (spec 2.4.5)
    if (!this.openSent && this.phase === 'amqp') this.sendOpen();
    if (!this.openSent) {
      // no AMQP layer yet: nothing to send, just stop
      this.finish(false);
      return;
    }
    this.flushSessions();
    this.writeFrame(0, { type: 'close', body: error ? { error } : {} });
    this.state = 'close-sent';
  }

  /**
   * The transport went away (socket closed/errored) without a Close handshake. Emits `closed`
   * with `error` (default amqp:connection:forced); outgoing deliveries keep their status, so a
   * 'sent' and unsettled one is in doubt.
   */
  transportClosed(error?: AmqpErrorBody): void {
    if (this.state === 'closed') return;
    if (!this.error || this.state !== 'close-sent') {
      this.error = error ?? { condition: Condition.connectionForced, description: 'transport closed' };
    }
    this.finish(this.state !== 'close-sent');
  }

  /** Sessions not yet ended. */
  /** Whether the peer owes us an answer on some session (docs/failover.md#unresponsive). */
  /**
   * The peer has answered a probe with a session flow (AMQP 1.0 2.7.4 obliges it to; RabbitMQ
   * 3.10's AMQP 1.0 plugin does not): only then does an unanswered probe mean anything
   * (docs/failover.md#unresponsive).
   */
  echoAnswered = false;
  /**
   * The peer has answered a probe session's Begin: it runs, even if it ignores `echo`
   * (docs/failover.md#unresponsive).
   */
  beginAnswered = false;
  /** A session begun only to see the peer answer, until its End comes back. */
  private probeSession: Session | undefined;

  /** Whether the peer has answered a probe of either kind: only then is an unanswered one a sign. */
  get answersProbes(): boolean {
    return this.echoAnswered || this.beginAnswered;
  }

  awaitingPeer(): boolean {
    if (this.state !== 'open') return false;
    for (const s of this.sessions) if (s?.awaitingPeer()) return true;
    return false;
  }

  /**
   * Ask the peer for an answer: a session flow with `echo` on the first mapped session (the peer
   * must answer with its flow state). A peer that has not answered an echo yet is also sent a
   * Begin of a session of our own, ended as soon as it is answered: every peer must answer a
   * Begin, and a running broker does so even while its queues elect a leader and answer nothing
   * else (RabbitMQ 3.10 ignores `echo`). `echoOnly`: just the flow (learning whether the peer
   * answers it). False when nothing was asked.
   */
  probe(echoOnly = false): boolean {
    if (this.state !== 'open') return false;
    let asked = false;
    for (const s of this.sessions)
      if (s?.requestEcho()) {
        asked = true;
        break;
      }
    // no mapped session: nothing is owed to us either, so nothing to ask about
    if (!asked || echoOnly || this.echoAnswered) return asked;
    if (this.probeSession !== undefined && this.probeSession.state !== 'ended') return true;
    if (this.unusedChannel() !== undefined) this.probeSession = this.begin();
    return true;
  }

  activeSessions(): Session[] {
    return this.sessions.filter((s): s is Session => s !== undefined);
  }

  get canTransfer(): boolean {
    return this.state === 'open';
  }

  // ---------------------------------------------------------------- internals for sessions/links

  /** @internal */
  emit(ev: EngineEvent): void {
    this.events.push(ev);
  }

  /** @internal the engine raised an error at some scope: tell the user. */
  reportError(
    scope: 'connection' | 'session' | 'link',
    condition: string,
    description?: string,
    where?: { session?: Session; link?: Link },
  ): void {
    const error: AmqpErrorBody = { condition };
    if (description !== undefined) error.description = description;
    this.opts.logger?.warn?.({ scope, condition, description }, 'amqp protocol error');
    this.emit({ type: 'protocol-error', scope, error, session: where?.session, link: where?.link });
  }

  /** @internal close the connection on a connection-scope violation. */
  fail(condition: string, description: string): void {
    this.reportError('connection', condition, description);
    this.close({ condition, description });
  }

  /** @internal */
  writeFrame(channel: number, p: Performative, payload?: Uint8Array): void {
    if (this.state === 'close-sent' || this.state === 'closed') return;
    this.traceFrame?.('out', channel, p, payload?.length ?? 0);
    const length = payload?.length ?? 0;
    if (!this.openSent && p.type !== 'open') {
      // pipelined before our Open: held apart until it is written (rare, one buffer each)
      this.beforeOpen.push(encodeAmqpFrame(channel, p, payload));
      this.lastSent = this.now;
    } else {
      this.append(encodeAmqpFrameHead(channel, p, length), payload);
    }
  }

  /** A frame's encoded head and its payload into the output. */
  private append(head: EncodedHead, payload: Uint8Array | undefined): void {
    if (payload !== undefined && payload.length >= COPY_LIMIT) {
      // large payloads go out as their own buffer (writev), never copied
      this.out.copy(head);
      this.out.push(payload);
    } else {
      this.out.copy(head, payload);
    }
    this.lastSent = this.now;
  }

  /**
   * @internal The first (or only) transfer of a delivery with no delivery state: its head is
   * written field by field straight into the output (no performative object per delivery); with a
   * frame trace on, or before our Open, through writeFrame like any frame.
   */
  writeDeliveryStart(
    channel: number,
    handle: number,
    d: DeliveryStart,
    more: boolean,
    payload: Uint8Array,
  ): void {
    if (this.traceFrame !== undefined || !this.openSent) {
      const t: Transfer = { handle, deliveryId: d.id, deliveryTag: d.tag, messageFormat: d.messageFormat };
      if (d.presettled) t.settled = true;
      if (more) t.more = true;
      this.writeFrame(channel, { type: 'transfer', body: t }, payload);
      return;
    }
    if (this.state === 'close-sent' || this.state === 'closed') return;
    this.append(encodeTransferHead(channel, handle, d, more, payload.length), payload);
  }

  /** @internal */
  markDirty(s: Session): void {
    if (s.dirty) return;
    s.dirty = true;
    this.dirty.push(s);
  }

  /** @internal */
  freeChannel(s: Session): void {
    if (this.sessions[s.channel] === s) this.sessions[s.channel] = undefined;
    if (s.remoteChannel >= 0 && this.remoteSessions.get(s.remoteChannel) === s) {
      this.remoteSessions.delete(s.remoteChannel);
    }
  }

  // ---------------------------------------------------------------- processing

  private flushSessions(): void {
    const d = this.dirty;
    this.dirty = [];
    for (const s of d) s.flush();
  }

  private process(): void {
    while (this.phase !== 'done' && this.phase !== 'auth-pending') {
      let f: Frame | HeaderFrame | undefined;
      try {
        f = this.reader.next() as Frame | HeaderFrame | undefined;
      } catch (e) {
        this.onDecodeError(e);
        return;
      }
      if (f === undefined) return;
      switch (f.kind) {
        case 'protocol-header':
          this.handshake.onHeader(f);
          break;
        case 'sasl':
          this.handshake.onSasl(f.performative);
          break;
        case 'amqp':
          this.traceFrame?.('in', f.channel, f.performative, f.payload?.length ?? 0);
          this.onAmqp(f.channel, f.performative, f.payload);
          break;
        case 'heartbeat':
          this.traceFrame?.('in', 0, undefined, 0);
          if (this.phase !== 'amqp')
            this.terminate(Condition.framingError, 'empty frame outside the AMQP layer');
          break;
      }
    }
  }

  private onDecodeError(e: unknown): void {
    const err = e as { condition?: unknown; description?: unknown; message?: unknown };
    const condition = typeof err.condition === 'string' ? err.condition : Condition.decodeError;
    const description =
      typeof err.description === 'string' ? err.description : String(err.message ?? 'undecodable input');
    this.reportError('connection', condition, description);
    // a server answers a header it cannot parse with the one it supports
    if (this.role === 'server' && this.handshake.firstHeader) {
      this.out.push(encodeProtocolHeader(this.opts.allowNoSasl === false ? 3 : 0));
    }
    this.close({ condition, description });
    // the byte stream is no longer parseable: do not wait for the peer's Close
    this.finish(false);
  }

  /** Stop without a Close frame (before the AMQP layer, or when the stream is unusable). */
  private terminate(condition: string, description: string): void {
    const error = { condition, description };
    this.error = error;
    this.reportError('connection', condition, description);
    this.finish(false);
  }

  private finish(byPeer: boolean): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.phase = 'done';
    for (const s of this.sessions) s?.onConnectionGone();
    this.emit({ type: 'closed', error: this.error, byPeer });
  }

  private sendAmqpHeaderAndOpen(): void {
    this.state = 'opening';
    this.out.push(encodeProtocolHeader(0));
    this.sendOpen();
  }

  private sendOpen(): void {
    this.phase = 'amqp';
    this.writeFrame(0, { type: 'open', body: this.localOpen });
    this.openSent = true;
    // frames the user wrote during SASL (begin, attach, flow) follow our Open
    if (this.beforeOpen.length > 0) {
      for (const b of this.beforeOpen) this.out.push(b);
      this.beforeOpen = [];
    }
    this.reader.setMaxFrameSize(this.localOpen.maxFrameSize!);
  }

  private onAmqp(channel: number, p: Performative, payload: Uint8Array | undefined): void {
    if (this.phase !== 'amqp') {
      this.terminate(Condition.framingError, `unexpected AMQP frame ${p.type}`);
      return;
    }
    if (this.state === 'close-sent') {
      if (p.type === 'close') this.onClose(p.body.error);
      return;
    }
    if (!this.remoteOpen) {
      if (p.type !== 'open') {
        this.fail(Condition.illegalState, `${p.type} before open`);
        return;
      }
      this.onOpen(p.body);
      return;
    }
    switch (p.type) {
      case 'begin':
        this.onBegin(channel, p.body);
        return;
      case 'close':
        this.onClose(p.body.error);
        return;
      case 'open':
        this.fail(Condition.illegalState, 'second open');
        return;
      default: {
        const s = this.remoteSessions.get(channel);
        if (!s) {
          this.fail(Condition.illegalState, `${p.type} on channel ${channel} with no session`);
          return;
        }
        s.onFrame(p, payload);
      }
    }
  }

  private onOpen(o: Open): void {
    this.remoteOpen = o;
    const remoteMax = o.maxFrameSize ?? UINT_MAX;
    if (remoteMax < MIN_MAX_FRAME_SIZE) {
      this.fail(Condition.invalidField, `peer max-frame-size ${remoteMax} below ${MIN_MAX_FRAME_SIZE}`);
      return;
    }
    this.outgoingMaxFrameSize = Math.min(remoteMax, this.localOpen.maxFrameSize!);
    this.remoteChannelMax = o.channelMax ?? 65535;
    // a peer asking for heartbeats more often than every 100 ms gets them every 100 ms
    this.remoteIdle = o.idleTimeOut ? Math.max(o.idleTimeOut, 200) : 0;
    if (!this.openSent) this.sendOpen();
    this.state = 'open';
    this.emit({ type: 'remote-open', open: o });
    // links attached before the peer's Open may hold queued deliveries
    for (const s of this.sessions) {
      if (!s) continue;
      for (const l of s.activeLinks()) if (l.isSender) (l as unknown as { pump(): void }).pump();
    }
  }

  private onClose(error: AmqpErrorBody | undefined): void {
    const byPeer = this.state !== 'close-sent';
    if (byPeer) {
      if (error) this.error = error;
      this.emit({ type: 'remote-close', error });
      this.writeFrame(0, { type: 'close', body: {} });
    }
    this.finish(byPeer);
  }

  private onBegin(channel: number, b: Begin): void {
    if (channel > this.localChannelMax) {
      this.fail(
        Condition.framingError,
        `begin on channel ${channel} above channel-max ${this.localChannelMax}`,
      );
      return;
    }
    if (this.remoteSessions.has(channel)) {
      this.fail(Condition.illegalState, `begin on channel ${channel} in use`);
      return;
    }
    let s: Session;
    if (b.remoteChannel !== undefined) {
      const mine = this.sessions[b.remoteChannel];
      if (mine?.state !== 'begin-sent') {
        this.fail(Condition.illegalState, `begin answers channel ${b.remoteChannel}, which began no session`);
        return;
      }
      s = mine;
      s.onRemoteBegin(channel, b);
      if (s === this.probeSession) {
        // the answer is all we wanted: end it (its End answer is not reported either)
        this.beginAnswered = true;
        this.remoteSessions.set(channel, s);
        s.end();
        return;
      }
    } else {
      const ch = this.unusedChannel();
      if (ch === undefined) {
        this.fail(Condition.resourceLimitExceeded, 'no free channel');
        return;
      }
      s = new Session(this, ch, {}, { channel, begin: b });
      this.sessions[ch] = s;
    }
    this.remoteSessions.set(channel, s);
    this.emit({ type: 'session-begin', session: s, begin: b });
  }

  /** The lowest channel no session uses (within both channel-max values), or undefined. */
  private unusedChannel(): number | undefined {
    const max = Math.min(this.localChannelMax, this.remoteChannelMax);
    for (let c = 0; c <= max; c++) if (this.sessions[c] === undefined) return c;
    return undefined;
  }
}
