/**
 * One physical connection: a connected stream (net/tls socket, or what a custom `dial` returned)
 * driving one sans-I/O ProtocolConnection through the shared adapter loop (protocol/engine-driver.ts):
 * output coalesced into one write per microtask, a timer following engine.nextDeadline() for
 * heartbeats and the idle timeout. What is the client's own stays here: engine events go to a
 * handler (until one is set, between the remote Open and the logical connection taking over, they
 * are queued so nothing is lost in that gap), a lost socket is a LostSocket, and a failure before
 * the peer's Open is classified (connect-errors.ts).
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { Open } from '../codec/contract.js';
import { AmqpError, ClientError } from '../errors.js';
import type { ServerAddress, SilenceWatchOptions } from '../failover/index.js';
import {
  EngineDriver,
  type EngineEvent,
  ProtocolConnection,
  type SaslClientOptions,
  SocketPort,
  toAmqpError,
  WebSocketStream,
} from '../protocol/index.js';
import { isWebSocketScheme } from '../wire-extensions.js';
import {
  closedBeforeOpen,
  looksLikeTls,
  noFirstByteFailure,
  noOpenFailure,
  notAmqpFailure,
  socketFailure,
  tlsPortFailure,
} from './connect-errors.js';
import type { DialFunction, Logger } from './types.js';
import { UnresponsiveGuard } from './unresponsive.js';
import { dialWebSocket } from './websocket-dial.js';

/** After our Close, how long we wait for the peer's before dropping the socket. */
const CLOSE_GRACE_MS = 2_000;
/** After the engine closed and the socket was ended, how long the final Close has to drain. */
const END_GRACE_MS = 100;

export const now = (): number => performance.now();

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
  tls?: tls.ConnectionOptions;
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

export class PhysicalConnection {
  readonly engine: ProtocolConnection;
  readonly url: string;
  remoteOpen: Open | undefined = undefined;
  /** Set once the connection is gone. */
  lostError: Error | undefined = undefined;
  private handler: PhysicalHandler | undefined = undefined;
  private queued: EngineEvent[] = [];
  private lostByPeerClose = false;
  private closeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly port: SocketPort;
  private readonly driver: EngineDriver;
  private readonly guard: UnresponsiveGuard | undefined;

  constructor(
    socket: Duplex,
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
    this.port = new SocketPort(
      socket,
      { clock: now, endGraceMs: END_GRACE_MS },
      {
        data: (chunk, at) => {
          if (this.lostError) return;
          this.guard?.heard(at);
          this.engine.receive(chunk, at);
          this.pump();
        },
        error: (err) => this.lose(new LostSocket(`connection to ${this.url} failed`, err)),
        close: () => this.lose(new LostSocket(`connection to ${this.url} closed by the network`)),
      },
    );
    this.driver = new EngineDriver(
      this.engine,
      this.port,
      {
        onDeadline: (at) => {
          this.engine.tick(at);
          this.dispatch();
        },
      },
      { clock: now, batch: 'microtask' },
    );
    this.guard = opts.unresponsive ? new UnresponsiveGuard(this, opts.unresponsive, now) : undefined;
    this.pump();
  }

  /** The stream the connection runs over. */
  get socket(): Duplex {
    return this.port.socket;
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
      for (const ev of evs) {
        if (ev.type === 'remote-open') {
          this.remoteOpen = ev.open;
          // before Open we sent the smallest messages any peer takes; now we know its limit
          const stream = this.port.socket;
          if (stream instanceof WebSocketStream) stream.fitMessagesToPeer(ev.open.maxFrameSize);
        }
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
      setImmediate(() => this.port.destroy());
    } else {
      // the flush writes the final Close and ends the socket, destroyed after END_GRACE_MS
      this.driver.scheduleFlush();
    }
    this.handler?.onLost(this, error, this.lostByPeerClose);
  }
}

/** The error of a stream a custom dial produced or threw. */
function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Open a socket to `server`, run SASL and exchange Open. Resolves once the peer's Open arrived. */
export function connectPhysical(opts: AttemptOptions): Promise<PhysicalConnection> {
  const { server } = opts;
  return new Promise<PhysicalConnection>((resolve, reject) => {
    let settled = false;
    let phys: PhysicalConnection | undefined;
    let socket: Duplex | undefined;
    // what the peer said first, kept until Open: a plain connection to a TLS port is known by it
    const firstBytes: { seen: Uint8Array | undefined } = { seen: undefined };
    const noteFirstBytes = (chunk: Uint8Array) => {
      if (firstBytes.seen === undefined) firstBytes.seen = chunk.subarray(0, 3);
    };
    // a custom dial or an opening WebSocket learns through this that the attempt was given up
    const attempt = new AbortController();
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(silentTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      attempt.abort(err);
      if (phys) phys.destroy(err);
      else socket?.destroy();
      reject(err);
    };
    const onAbort = () =>
      fail(new ClientError('quorate:aborted', 'connect aborted', { cause: opts.signal?.reason }));
    const startedAt = now();
    const timer = setTimeout(
      () => fail(noOpenFailure(server.host, server.port, opts.timeoutMs)),
      opts.timeoutMs,
    );
    const firstByteDeadlineMs = opts.firstByteDeadlineMs;
    let silentTimer: ReturnType<typeof setTimeout> | undefined =
      firstByteDeadlineMs !== undefined && firstByteDeadlineMs < opts.timeoutMs
        ? setTimeout(
            () => fail(noFirstByteFailure(server.host, server.port, firstByteDeadlineMs)),
            firstByteDeadlineMs,
          )
        : undefined;
    const onFirstByte = () => {
      clearTimeout(silentTimer);
      silentTimer = undefined;
      opts.onFirstByte?.(now() - startedAt);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const onConnected = () => {
      if (settled || !socket) return;
      socket.removeListener('error', onSocketError);
      phys = new PhysicalConnection(socket, server, opts);
      phys.setHandler({
        onEvent: (ev, p) => {
          if (ev.type !== 'remote-open' || settled) return;
          settled = true;
          clearTimeout(timer);
          clearTimeout(silentTimer);
          opts.signal?.removeEventListener('abort', onAbort);
          socket?.removeListener('data', noteFirstBytes);
          // stop routing: events from here on queue until the logical connection takes over
          p.setHandler(undefined);
          resolve(p);
        },
        onLost: (_p, error) => fail(beforeOpenFailure(server, error, firstBytes.seen)),
      });
      if (server.scheme === 'amqp') socket.on('data', noteFirstBytes);
      socket.once('data', onFirstByte);
    };
    const onSocketError = (err: Error) => fail(socketFailure(server.host, server.port, err));
    const servername = net.isIP(server.host) ? undefined : server.host;
    const dial = opts.dial;
    const scheme = server.scheme;
    // a custom dial opens TCP-like streams: ws / wss members always go through WebSocket
    if (dial && !isWebSocketScheme(scheme)) {
      const target = { scheme, host: server.host, port: server.port };
      Promise.resolve()
        .then(() => dial(target, attempt.signal))
        .then(
          (raw) => {
            if (settled) {
              raw.destroy();
              return;
            }
            if (raw.destroyed) {
              fail(closedBeforeOpen(server.host, server.port, undefined));
              return;
            }
            if (server.scheme === 'amqps') {
              // TLS runs over the dialed stream as it would over TCP
              const secure = tls.connect({ socket: raw, servername, ...opts.tls }, onConnected);
              secure.once('close', () => raw.destroy());
              socket = secure;
              socket.on('error', onSocketError);
              return;
            }
            socket = raw;
            socket.on('error', onSocketError);
            onConnected();
          },
          (err: unknown) => fail(socketFailure(server.host, server.port, asError(err))),
        );
    } else if (isWebSocketScheme(server.scheme)) {
      // AMQP over WebSocket (docs/websocket.md#client); TLS is the WebSocket's own for wss
      const host = server.host.includes(':') ? `[${server.host}]` : server.host;
      const url = `${server.scheme}://${host}:${server.port}${server.path ?? '/'}`;
      dialWebSocket(url, {
        ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
        signal: attempt.signal,
      }).then(
        (stream) => {
          if (settled) {
            stream.destroy();
            return;
          }
          socket = stream;
          socket.on('error', onSocketError);
          onConnected();
        },
        (err: unknown) => fail(socketFailure(server.host, server.port, asError(err))),
      );
    } else {
      socket =
        server.scheme === 'amqps'
          ? tls.connect({ host: server.host, port: server.port, servername, ...opts.tls }, onConnected)
          : net.connect({ host: server.host, port: server.port }, onConnected);
      socket.on('error', onSocketError);
    }
    if (opts.signal?.aborted) onAbort();
  });
}

/**
 * Why the connection was lost before the peer's Open: a socket error (refused, reset, TLS) as
 * connect-failed with its cause; a protocol-header mismatch as "not AMQP"; an AMQP error the peer
 * or our engine raised (SASL failure, a Close) as is.
 */
function beforeOpenFailure(
  server: ServerAddress<unknown>,
  error: Error,
  firstBytes: Uint8Array | undefined,
): Error {
  if (server.scheme === 'amqp' && firstBytes !== undefined && looksLikeTls(firstBytes))
    return tlsPortFailure(server.host, server.port);
  if (error instanceof LostSocket) {
    return error.cause instanceof Error
      ? socketFailure(server.host, server.port, error.cause)
      : closedBeforeOpen(
          server.host,
          server.port,
          server.scheme === 'amqp' ? (firstBytes ?? null) : undefined,
        );
  }
  if (error instanceof AmqpError && error.condition === 'amqp:connection:framing-error')
    return notAmqpFailure(server.host, server.port, error);
  return error;
}
