/**
 * The ground floor of the protocol connection engine (connection.ts): every field it is made of,
 * in one place so the object keeps one shape, and the constructor that builds our Open, the frame
 * reader and the handshake. Split from writing frames (connection-output.ts), reading them
 * (connection-input.ts) and the driving API (connection.ts) so each file has one job; a class
 * chain, not helpers, so the per-frame paths stay plain method calls on one object.
 */
import {
  type AmqpErrorBody,
  encodeProtocolHeader,
  FrameReader,
  MIN_MAX_FRAME_SIZE,
  type Open,
} from './codec-port.js';
import { type FrameTrace, frameTraceFor } from './frame-trace.js';
import { Handshake, type Phase } from './handshake.js';
import { FrameOutput } from './output.js';
import type { Session } from './session.js';
import type { ConnectionState, EngineEvent, EngineOptions, Role } from './types.js';

export abstract class ConnectionFields {
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

  protected readonly opts: EngineOptions;
  protected readonly traceFrame: FrameTrace | undefined;
  protected readonly reader: FrameReader;
  protected phase: Phase = 'header';
  protected readonly handshake: Handshake;
  protected readonly out = new FrameOutput();
  /** Client: frames written while SASL is still in progress, sent right after our Open. */
  protected beforeOpen: Uint8Array[] = [];
  protected events: EngineEvent[] = [];
  protected now: number;
  protected lastReceived: number;
  protected lastSent: number;
  protected openSent = false;
  protected readonly localIdle: number;
  protected remoteIdle = 0;
  protected readonly localChannelMax: number;
  protected remoteChannelMax = 65535;
  protected readonly sessions: (Session | undefined)[] = [];
  protected readonly remoteSessions = new Map<number, Session>();
  protected dirty: Session[] = [];
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
  protected probeSession: Session | undefined;

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

  protected abstract emit(ev: EngineEvent): void;
  protected abstract terminate(condition: string, description: string): void;
  protected abstract sendAmqpHeaderAndOpen(): void;
  protected abstract process(): void;
}
