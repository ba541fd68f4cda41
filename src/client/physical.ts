/**
 * One physical connection: a port (a net/tls socket or a custom `dial`'s stream through SocketPort,
 * or a browser's WebSocket through WebSocketPort) driving one sans-I/O ProtocolConnection through the shared adapter loop (protocol/engine-driver.ts):
 * output coalesced into one write once the microtask queue is drained (after a read that filled its buffer: once
 * the next read is handled, at most at the end of the turn), a timer following engine.nextDeadline() for
 * heartbeats and the idle timeout. What is the client's own stays here: engine events go to a
 * handler (until one is set, between the remote Open and the logical connection taking over, they
 * are queued so nothing is lost in that gap), a lost socket is a LostSocket, and a failure before
 * the peer's Open is classified (connect-errors.ts). Opening the port is transport.ts's job (Node)
 * or transport-browser.ts's (the browser build): this file imports no Node module.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { Open } from '../codec/contract.js';
import { ClientError } from '../errors.js';
import type { ServerAddress, SilenceWatchOptions } from '../failover/index.js';
import {
  type DriverHooks,
  EngineDriver,
  type EngineEvent,
  type EngineOutput,
  ProtocolConnection,
  type SaslClientOptions,
  type SocketEvents,
  toAmqpError,
} from '../protocol/index.js';
import type { DialFunction, Logger } from './types.js';
import { UnresponsiveGuard } from './unresponsive.js';

/** After our Close, how long we wait for the peer's before dropping the socket. */
const CLOSE_GRACE_MS = 2_000;
/** After the engine closed and the socket was ended, how long the final Close has to drain. */
export const END_GRACE_MS = 100;

/** The connection's clock (ms): the global `performance`, in Node and in a browser. */
export const now = (): number => performance.now();

/** What a connection runs over: the engine's output, and a way to drop it at once. */
export interface BytePort extends EngineOutput {
  /** Drop the transport at once; its close is reported through the events. */
  destroy(): void;
}

/** Makes the port for a connection, wiring the transport's events to it. */
export type OpenPort = (events: SocketEvents) => BytePort;

export interface PhysicalHandler {
  onEvent(ev: EngineEvent, phys: PhysicalConnection): void;
  /** Called once when the connection is gone (socket closed/failed, engine closed, idle timeout). */
  onLost(phys: PhysicalConnection, error: Error, byPeerClose: boolean): void;
}

/** One connection attempt to one member. */
export interface AttemptOptions {
  server: ServerAddress<unknown>;
  containerId: string;
  idleTimeoutMs: number;
  maxFrameSize: number;
  hostname?: string;
  username?: string;
  password?: string;
  tls?: TlsConnectionOptions;
  /** Opens the byte stream instead of net/tls (TLS still runs over it for amqps). */
  dial?: DialFunction;
  logger?: Logger;
  /** Give up on this attempt after this long (socket + SASL + Open). */
  timeoutMs: number;
  signal?: AbortSignal;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  /** Suspect a member silent while it owes answers (docs/failover.md#unresponsive); absent: off. */
  unresponsive?: SilenceWatchOptions;
  /**
   * Give up on this attempt when the peer sent no byte this long after the dial started (a
   * stopped member the kernel still accepts for: docs/failover.md#silent-member); absent: only
   * `timeoutMs` applies.
   */
  firstByteDeadlineMs?: number;
  /** Told how long after the dial started the peer's first byte came (the deadline's samples). */
  onFirstByte?: (elapsedMs: number) => void;
}

/** The socket failed or closed under the connection (no AMQP Close); a failover follows. */
export class LostSocket extends ClientError {
  constructor(description: string, cause?: Error) {
    super('quorate:connection-lost', description, cause === undefined ? {} : { cause });
    this.name = 'ClientError';
  }
}

/**
 * The port's calls into its connection, as methods of a class rather than closures made per
 * connection (the connection is the driver's hooks itself, for the same reason): optimized code
 * that calls a per-connection closure holds that closure as its call target, so it was thrown
 * away (V8's "weak objects" deopt) and compiled again after every connection collected.
 */
class PortEvents implements SocketEvents {
  constructor(private readonly phys: PhysicalConnection) {}

  data(chunk: Uint8Array, at: number, more: boolean): void {
    this.phys.portData(chunk, at, more);
  }

  error(err: Error): void {
    this.phys.portFailed(err);
  }

  close(): void {
    this.phys.portClosed();
  }
}

export class PhysicalConnection implements DriverHooks {
  readonly engine: ProtocolConnection;
  readonly url: string;
  remoteOpen: Open | undefined = undefined;
  /** Set once the connection is gone. */
  lostError: Error | undefined = undefined;
  private handler: PhysicalHandler | undefined = undefined;
  private queued: EngineEvent[] = [];
  private lostByPeerClose = false;
  private closeTimer: ReturnType<typeof setTimeout> | undefined;
  /** The port the connection runs over (a SocketPort in Node, a WebSocketPort in the browser build). */
  readonly port: BytePort;
  private readonly driver: EngineDriver;
  private readonly guard: UnresponsiveGuard | undefined;
  /** False while a read that filled its buffer awaits the next one: writes wait (holdWritesForNextRead). */
  private readsCaughtUp = true;

  constructor(
    openPort: OpenPort,
    readonly server: ServerAddress<unknown>,
    opts: AttemptOptions,
  ) {
    this.url = `${server.scheme}://${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`;
    const username = server.username ?? opts.username;
    const password = server.password ?? opts.password ?? '';
    const sasl: SaslClientOptions =
      username !== undefined ? { mechanism: 'PLAIN', username, password } : { mechanism: 'ANONYMOUS' };
    this.engine = new ProtocolConnection({
      role: 'client',
      open: {
        containerId: opts.containerId,
        hostname: opts.hostname ?? server.hostname ?? server.host,
        maxFrameSize: opts.maxFrameSize,
        idleTimeOut: opts.idleTimeoutMs > 0 ? opts.idleTimeoutMs : undefined,
        offeredCapabilities: opts.offeredCapabilities,
        desiredCapabilities: opts.desiredCapabilities,
      },
      sasl,
      now: now(),
      logger: opts.logger,
      onAsyncWork: () => this.pump(),
    });
    this.port = openPort(new PortEvents(this));
    this.driver = new EngineDriver(this.engine, this.port, this, { clock: now, batch: 'drained' });
    this.guard = opts.unresponsive ? new UnresponsiveGuard(this, opts.unresponsive, now) : undefined;
    this.pump();
  }

  /** @internal the port read `chunk` (PortEvents.data). */
  portData(chunk: Uint8Array, at: number, more: boolean): void {
    if (this.lostError) return;
    this.guard?.heard(at);
    this.engine.receive(chunk, at);
    if (more) this.holdWritesForNextRead();
    else this.readsCaughtUp = true;
    this.pump();
  }

  /** @internal the port failed (PortEvents.error). */
  portFailed(err: Error): void {
    this.lose(new LostSocket(`connection to ${this.url} failed`, err));
  }

  /** @internal the port closed (PortEvents.close). */
  portClosed(): void {
    this.lose(new LostSocket(`connection to ${this.url} closed by the network`));
  }

  /** @internal DriverHooks: the engine's deadline passed. */
  onDeadline(at: number): void {
    this.engine.tick(at);
    this.dispatch();
  }

  /** @internal DriverHooks: a scheduled batch is written unless a read hold is on. */
  beforeFlush(): boolean {
    return this.readsCaughtUp;
  }

  get isLost(): boolean {
    return this.lostError !== undefined;
  }

  /** Route events to `handler` (delivering any queued ones, and a loss that already happened). */
  setHandler(handler: PhysicalHandler | undefined): void {
    this.handler = handler;
    if (!handler) return;
    const q = this.queued;
    this.queued = [];
    for (const ev of q) handler.onEvent(ev, this);
    if (this.lostError) handler.onLost(this, this.lostError, this.lostByPeerClose);
  }

  /**
   * A read filled its buffer, so the rest of what the broker sent (a burst of deliveries) is read
   * next, in this same turn: what we write in answer (dispositions, a credit top-up) waits for
   * that read, so a burst read in several reads is answered in one write, and the broker takes
   * one read and, in a cluster, proposes one settle for it rather than one per read
   * (docs/cluster-member.md#receive-writes). At most until the end of this turn.
   */
  private holdWritesForNextRead(): void {
    if (!this.readsCaughtUp) return;
    this.readsCaughtUp = false;
    setImmediate(this.endReadHold);
  }

  private readonly endReadHold = (): void => {
    if (this.readsCaughtUp) return;
    this.readsCaughtUp = true;
    this.driver.scheduleFlush();
  };

  /** Something may have produced output or events: handle events now, write at the end of the batch. */
  pump(): void {
    this.dispatch();
    this.driver.scheduleFlush();
    this.guard?.arm();
  }

  scheduleFlush(): void {
    this.driver.scheduleFlush();
  }

  /** Close with a Close frame (optionally an error); the socket goes once the peer answers. */
  close(error?: { condition: string; description?: string }): void {
    if (this.lostError) return;
    this.engine.close(error);
    this.pump();
    this.closeTimer ??= setTimeout(() => this.destroy(), CLOSE_GRACE_MS);
    this.closeTimer.unref?.();
  }

  /** Drop the socket at once (no Close frame). */
  destroy(error?: Error): void {
    this.lose(error ?? new ClientError('quorate:closed', `connection to ${this.url} dropped`));
    this.port.destroy();
  }

  private dispatch(): void {
    for (;;) {
      const evs = this.engine.pollEvents();
      if (evs.length === 0) return;
      // indexed, not for-of: this loop stays unoptimized long enough (it runs once per read) that
      // the array iterator allocated a result object per event
      for (let i = 0; i < evs.length; i++) {
        const ev = evs[i]!;
        if (ev.type === 'remote-open') this.remoteOpen = ev.open;
        if (this.handler) this.handler.onEvent(ev, this);
        else this.queued.push(ev);
        if (ev.type === 'closed') {
          const err = ev.error
            ? toAmqpError('connection', ev.error)
            : new ClientError('quorate:connection-lost', `connection to ${this.url} closed by the peer`);
          this.lostByPeerClose = ev.byPeer;
          // write what is left (our answering Close), then end the socket
          this.driver.scheduleFlush();
          this.lose(err);
        }
      }
    }
  }

  private lose(error: Error): void {
    if (this.lostError) return;
    this.lostError = error;
    this.driver.stop();
    this.guard?.stop();
    if (this.closeTimer) clearTimeout(this.closeTimer);
    if (this.engine.state !== 'closed') {
      // the socket is gone under an open engine: nothing more can be written
      setTimeout(() => this.port.destroy(), 0);
    } else {
      // the flush writes the final Close and ends the socket, destroyed after END_GRACE_MS
      this.driver.scheduleFlush();
    }
    this.handler?.onLost(this, error, this.lostByPeerClose);
  }
}
