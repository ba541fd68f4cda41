/**
 * One physical connection: a net/tls socket driving one sans-I/O ProtocolConnection.
 *
 * - Output is coalesced: every API call or input only schedules a flush (queueMicrotask); the
 *   flush takes all pending frames and writes them with ONE socket write (a single Buffer when
 *   small, else cork + writes + uncork, which Node turns into one writev).
 * - A timer follows engine.nextDeadline() for heartbeats and the idle timeout.
 * - Engine events go to a handler; until one is set (between the remote Open and the logical
 *   connection taking over) they are queued, so nothing is lost in that gap.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import type { Open } from '../codec/contract.js';
import { AmqpError, ClientError } from '../errors.js';
import type { ServerAddress } from '../failover/index.js';
import {
  type EngineEvent,
  ProtocolConnection,
  type SaslClientOptions,
  toAmqpError,
} from '../protocol/index.js';
import { closedBeforeOpen, noOpenFailure, notAmqpFailure, socketFailure } from './connect-errors.js';
import type { Logger } from './types.js';

/** Frames below this total size are joined into one Buffer; bigger batches use cork/uncork. */
const CONCAT_LIMIT = 64 * 1024;
/** After our Close, how long we wait for the peer's before dropping the socket. */
const CLOSE_GRACE_MS = 2_000;

export const now = (): number => performance.now();

export interface PhysicalHandler {
  onEvent(ev: EngineEvent, phys: PhysicalConnection): void;
  /** Called once when the connection is gone (socket closed/failed, engine closed, idle timeout). */
  onLost(phys: PhysicalConnection, error: Error, byPeerClose: boolean): void;
}

export interface DialOptions {
  server: ServerAddress<unknown>;
  containerId: string;
  idleTimeoutMs: number;
  maxFrameSize: number;
  hostname?: string;
  username?: string;
  password?: string;
  tls?: tls.ConnectionOptions;
  logger?: Logger;
  /** Give up on this attempt after this long (socket + SASL + Open). */
  timeoutMs: number;
  signal?: AbortSignal;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
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
  private flushScheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private lostByPeerClose = false;
  private closeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly socket: net.Socket,
    readonly server: ServerAddress<unknown>,
    opts: DialOptions,
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
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.lostError) return;
      this.engine.receive(chunk, now());
      this.pump();
    });
    socket.on('error', (err) => this.lose(new LostSocket(`connection to ${this.url} failed`, err)));
    socket.on('close', () => this.lose(new LostSocket(`connection to ${this.url} closed by the network`)));
    this.pump();
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
    this.scheduleFlush();
  }

  scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
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
    this.socket.destroy();
  }

  private dispatch(): void {
    for (;;) {
      const evs = this.engine.pollEvents();
      if (evs.length === 0) return;
      for (const ev of evs) {
        if (ev.type === 'remote-open') this.remoteOpen = ev.open;
        if (this.handler) this.handler.onEvent(ev, this);
        else this.queued.push(ev);
        if (ev.type === 'closed') {
          const err = ev.error
            ? toAmqpError('connection', ev.error)
            : new ClientError('quorate:connection-lost', `connection to ${this.url} closed by the peer`);
          this.lostByPeerClose = ev.byPeer;
          // write what is left (our answering Close), then end the socket
          this.scheduleFlush();
          this.lose(err);
        }
      }
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.socket.destroyed) return;
    const out = this.engine.takeOutput();
    if (out.length === 1) {
      this.socket.write(out[0]!);
    } else if (out.length > 1) {
      let total = 0;
      for (const b of out) total += b.length;
      if (total <= CONCAT_LIMIT) {
        this.socket.write(Buffer.concat(out, total));
      } else {
        this.socket.cork();
        for (const b of out) this.socket.write(b);
        this.socket.uncork();
      }
    }
    if (this.engine.state === 'closed') {
      this.socket.end();
      this.clearTimer();
      return;
    }
    this.armTimer();
  }

  private armTimer(): void {
    const at = this.engine.nextDeadline();
    if (at === undefined) {
      this.clearTimer();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        if (this.lostError) return;
        this.engine.tick(now());
        this.pump();
        this.armTimer();
      },
      Math.max(0, Math.ceil(at - now())),
    );
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private lose(error: Error): void {
    if (this.lostError) return;
    this.lostError = error;
    this.clearTimer();
    if (this.closeTimer) clearTimeout(this.closeTimer);
    if (this.engine.state !== 'closed') {
      // the socket is gone under an open engine: nothing more can be written
      setImmediate(() => this.socket.destroy());
    } else {
      // give the final Close a moment to drain, then make sure the socket goes
      setTimeout(() => this.socket.destroy(), 100).unref?.();
    }
    this.handler?.onLost(this, error, this.lostByPeerClose);
  }
}

/** Open a socket to `server`, run SASL and exchange Open. Resolves once the peer's Open arrived. */
export function dial(opts: DialOptions): Promise<PhysicalConnection> {
  const { server } = opts;
  return new Promise<PhysicalConnection>((resolve, reject) => {
    let settled = false;
    let phys: PhysicalConnection | undefined;
    let socket: net.Socket;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (phys) phys.destroy(err);
      else socket.destroy();
      reject(err);
    };
    const onAbort = () =>
      fail(new ClientError('quorate:aborted', 'connect aborted', { cause: opts.signal?.reason }));
    const timer = setTimeout(
      () => fail(noOpenFailure(server.host, server.port, opts.timeoutMs)),
      opts.timeoutMs,
    );
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const onConnected = () => {
      if (settled) return;
      socket.removeListener('error', onSocketError);
      phys = new PhysicalConnection(socket, server, opts);
      phys.setHandler({
        onEvent: (ev, p) => {
          if (ev.type !== 'remote-open' || settled) return;
          settled = true;
          clearTimeout(timer);
          opts.signal?.removeEventListener('abort', onAbort);
          // stop routing: events from here on queue until the logical connection takes over
          p.setHandler(undefined);
          resolve(p);
        },
        onLost: (_p, error) => fail(beforeOpenFailure(server, error)),
      });
    };
    const onSocketError = (err: Error) => fail(socketFailure(server.host, server.port, err));
    if (server.scheme === 'amqps') {
      const servername = net.isIP(server.host) ? undefined : server.host;
      socket = tls.connect({ host: server.host, port: server.port, servername, ...opts.tls }, onConnected);
    } else {
      socket = net.connect({ host: server.host, port: server.port }, onConnected);
    }
    socket.on('error', onSocketError);
    if (opts.signal?.aborted) onAbort();
  });
}

/**
 * Why the connection was lost before the peer's Open: a socket error (refused, reset, TLS) as
 * connect-failed with its cause; a protocol-header mismatch as "not AMQP"; an AMQP error the peer
 * or our engine raised (SASL failure, a Close) as is.
 */
function beforeOpenFailure(server: ServerAddress<unknown>, error: Error): Error {
  if (error instanceof LostSocket) {
    return error.cause instanceof Error
      ? socketFailure(server.host, server.port, error.cause)
      : closedBeforeOpen(server.host, server.port);
  }
  if (error instanceof AmqpError && error.condition === 'amqp:connection:framing-error')
    return notAmqpFailure(server.host, server.port, error);
  return error;
}
