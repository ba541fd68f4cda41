import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { type Random, seededRandom } from '../../common/random.js';
import { DelayedPipe } from './delayed-pipe.js';

/** Where a proxy forwards to. A function is read per new connection (the target may move). */
export interface LinkTarget {
  host: string;
  port: number;
}

export interface LinkProxyOptions {
  target: LinkTarget | (() => LinkTarget);
  /** Default '127.0.0.1'. */
  listenHost?: string;
  /** Default 0 (the OS picks a free port). */
  listenPort?: number;
  /** Seed of the PRNG behind `setResetProbability`. Default 1. */
  seed?: number;
}

/**
 * How a cut link behaves:
 * - 'reset' (default): existing connections are reset (RST); new ones are accepted and reset at
 *   once, so the dialler sees ECONNRESET quickly (a link that is down and says so).
 * - 'blackhole': existing connections stall (nothing is forwarded either way) and new ones are
 *   accepted and left silent, as packets dropped by a partition would (the dialler must notice by
 *   its own timeouts). On `heal()` the stalled and silent connections are destroyed, so both ends
 *   reconnect cleanly rather than receive stale bytes.
 */
export type CutMode = 'reset' | 'blackhole';

/** Counters of one proxied link since it started. */
export interface LinkProxyStats {
  /** Bytes forwarded from dialler to target. */
  bytesToTarget: number;
  /** Bytes forwarded from target back to dialler. */
  bytesFromTarget: number;
  /** Connections the proxy accepted from the dialler. */
  connectionsAccepted: number;
  /** Connections turned away or held silent while cut. */
  connectionsRefused: number;
  /** Connections reset by `setResetProbability` (not counting cuts). */
  connectionsReset: number;
  /** Connections open now. */
  activeConnections: number;
  /** Bytes received and held back by `setDelay`, not yet forwarded. */
  bytesHeld: number;
}

/** Sends RST where the platform can (a hard failure, like a dropped link), else destroys. */
function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

/** A dialler's socket and the proxy's socket to the target, and the two pipes between them. */
class ProxiedConnection {
  private readonly pipes: DelayedPipe[] = [];
  closed = false;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
  ) {}

  attach(toTarget: DelayedPipe, fromTarget: DelayedPipe): void {
    this.pipes.push(toTarget, fromTarget);
  }

  get heldBytes(): number {
    return this.pipes.reduce((sum, pipe) => sum + pipe.heldBytes, 0);
  }

  stall(): void {
    for (const pipe of this.pipes) pipe.stall();
  }

  reset(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pipe of this.pipes) pipe.dispose();
    resetSocket(this.client);
    resetSocket(this.upstream);
  }
}

/**
 * A loopback TCP proxy for one link between two cluster members, which a test can cut, slow down
 * or make lossy. "Lossy" means random connection resets: TCP cannot lose bytes without corrupting
 * the stream, so a lossy network shows up to the application as dropped connections.
 */
export class LinkProxy {
  private readonly server: Server;
  private readonly connections = new Set<ProxiedConnection>();
  private readonly silent = new Set<Socket>();
  private random: Random;
  private readonly targetOf: () => LinkTarget;
  private cutMode: CutMode | undefined;
  private delay = 0;
  private resetProbability = 0;
  private boundPort = 0;
  private readonly counters = {
    bytesToTarget: 0,
    bytesFromTarget: 0,
    connectionsAccepted: 0,
    connectionsRefused: 0,
    connectionsReset: 0,
  };

  constructor(private readonly options: LinkProxyOptions) {
    const target = options.target;
    this.targetOf = typeof target === 'function' ? target : () => target;
    this.random = seededRandom(options.seed ?? 1);
    this.server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) =>
      this.accept(socket),
    );
  }

  /** Starts listening; resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(this.options.listenPort ?? 0, this.options.listenHost ?? '127.0.0.1', () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        this.boundPort = typeof addr === 'object' && addr !== null ? addr.port : 0;
        resolve(this.boundPort);
      });
    });
  }

  /** The listening port (0 before `listen()` resolved). */
  get port(): number {
    return this.boundPort;
  }

  get host(): string {
    return this.options.listenHost ?? '127.0.0.1';
  }

  get isCut(): boolean {
    return this.cutMode !== undefined;
  }

  /** Takes the link down (see `CutMode`) until `heal()`. */
  cut(mode: CutMode = 'reset'): void {
    this.cutMode = mode;
    for (const conn of this.connections) {
      if (mode === 'reset') conn.reset();
      else conn.stall();
    }
  }

  /** Brings the link back; connections stalled or held by a black-hole cut are destroyed. */
  heal(): void {
    if (this.cutMode === undefined) return;
    this.cutMode = undefined;
    for (const conn of this.connections) conn.reset();
    for (const socket of this.silent) resetSocket(socket);
    this.silent.clear();
  }

  /** Holds back every chunk (each direction) by `ms`, preserving order. 0 turns it off. */
  setDelay(ms: number): void {
    this.delay = Math.max(0, ms);
  }

  /** Each forwarded chunk resets its connection with probability `p` (seeded, replayable). */
  setResetProbability(p: number, seed?: number): void {
    this.resetProbability = Math.min(1, Math.max(0, p));
    if (seed !== undefined) this.random = seededRandom(seed);
  }

  stats(): LinkProxyStats {
    let bytesHeld = 0;
    for (const conn of this.connections) bytesHeld += conn.heldBytes;
    return { ...this.counters, activeConnections: this.connections.size, bytesHeld };
  }

  /** Stops listening and destroys every connection. */
  close(): Promise<void> {
    for (const conn of this.connections) conn.reset();
    for (const socket of this.silent) resetSocket(socket);
    this.silent.clear();
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    client.on('error', () => {});
    if (this.cutMode === 'reset') {
      this.counters.connectionsRefused++;
      resetSocket(client);
      return;
    }
    if (this.cutMode === 'blackhole') {
      this.counters.connectionsRefused++;
      this.silent.add(client);
      client.on('close', () => this.silent.delete(client));
      return;
    }
    this.counters.connectionsAccepted++;
    const target = this.targetOf();
    const upstream = createConnection({ host: target.host, port: target.port, allowHalfOpen: true });
    upstream.on('error', () => {});
    const conn = new ProxiedConnection(client, upstream);
    this.connections.add(conn);
    const admit = (): boolean => {
      if (this.resetProbability > 0 && this.random() < this.resetProbability) {
        this.counters.connectionsReset++;
        conn.reset();
        return false;
      }
      return true;
    };
    const delayMs = (): number => this.delay;
    conn.attach(
      new DelayedPipe(client, upstream, {
        delayMs,
        admit,
        forwarded: (n) => {
          this.counters.bytesToTarget += n;
        },
      }),
      new DelayedPipe(upstream, client, {
        delayMs,
        admit,
        forwarded: (n) => {
          this.counters.bytesFromTarget += n;
        },
      }),
    );
    let closedSides = 0;
    const onClose = (): void => {
      closedSides++;
      // One side gone with an error or reset: take the other down too, as a broken link would.
      if (closedSides === 1) {
        if (client.destroyed && !upstream.writableEnded) resetSocket(upstream);
        if (upstream.destroyed && !client.writableEnded) resetSocket(client);
      }
      if (closedSides === 2) {
        conn.closed = true;
        this.connections.delete(conn);
      }
    };
    client.on('close', onClose);
    upstream.on('close', onClose);
    client.resume();
  }
}
