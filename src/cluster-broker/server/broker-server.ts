/**
 * The AMQP listeners: TCP or TLS sockets, and WebSockets when asked (ws-listener.ts), each
 * stream driving a BrokerConnection. Connection limit,
 * one shared timer for heartbeats / idle / handshake deadlines, "not serving" closes.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import type { AmqpErrorBody } from '../../codec/index.js';
import { sharedInterval } from '../../common/shared-interval.js';
import { SocketPort } from '../../protocol/index.js';
import { Activity } from './activity.js';
import type { BrokerBackend } from './backend.js';
import { BrokerConnection, type ConnectionInfo, type ConnectionIo } from './broker-connection.js';
import { ConsumerRegistry, newCounters, type ServerContext, type ServerCounters } from './context.js';
import { DynamicNodes } from './dynamic-nodes.js';
import { type BrokerServerOptions, resolveServerOptions } from './options.js';
import { QueueAdmin } from './queue-admin.js';
import { type AlarmKind, ResourceAlarm } from './resource-alarm.js';
import { WebSocketListener } from './ws-listener.js';

/** Connections being refused (over the limit) at most at once; beyond, sockets are dropped. */
const MAX_REFUSING = 64;
/** After we end a socket, destroy it if the peer does not close within this. */
const END_GRACE_MS = 5000;

/** What {@link BrokerServer.stats} reports: counters plus what is open now. */
export interface BrokerServerStats extends ServerCounters {
  /** Client connections open now. */
  connections: number;
  /** Consumer links attached now. */
  consumers: number;
  /** Resource alarms on now (publishers blocked while any is). */
  alarms: AlarmKind[];
}

/** The AMQP 1.0 server of a broker: listens, speaks the protocol, commits through its backend. */
export class BrokerServer {
  /** The host it listens on. */
  readonly host: string;
  private listener: net.Server | undefined;
  private wsListener: WebSocketListener | undefined;
  private boundPort = 0;
  private readonly ctx: ServerContext;
  private readonly conns = new Set<BrokerConnection>();
  private readonly sockets = new Set<Duplex>();
  private refusing = 0;
  /** Sockets on the WebSocket port not yet upgraded: they hold a place under the caps. */
  private wsPending = 0;
  /** Open connections (and WebSocket sockets not yet upgraded) per source address (the per-address cap). */
  private readonly perAddress = new Map<string, number>();
  private readonly alarm: ResourceAlarm;
  private stopSweep: (() => void) | undefined;
  private stopping = false;
  private readonly onAvailable = (q: string): void => this.ctx.consumers.available(q);
  private readonly onStolen = (linkKey: string): void => this.ctx.consumers.steal(linkKey);
  private readonly onClaimed = (linkKey: string): void => this.ctx.dynamicNodes.ownerMoved(linkKey);
  private readonly onServing = (serving: boolean, reason: string | undefined): void => {
    if (!serving)
      this.closeAll({ condition: 'amqp:connection:forced', description: reason ?? 'not serving' });
  };

  constructor(private readonly options: BrokerServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    const opts = resolveServerOptions(options);
    this.alarm = new ResourceAlarm({
      maxMemory: opts.maxMemory,
      minDiskFree: opts.minDiskFree,
      diskPath: opts.diskPath,
      logger: opts.logger,
    });
    this.ctx = {
      backend: options.backend,
      opts,
      consumers: new ConsumerRegistry(),
      counters: newCounters(),
      activity: new Activity(),
      dynamicNodes: new DynamicNodes(options.backend, opts.logger, opts.dynamicNodeGraceMs),
      queueAdmin: new QueueAdmin(options.backend, opts.queueDefaults),
      alarm: this.alarm,
    };
  }

  /**
   * May the broker take `bytes` more memory for a while (the store asks before a snapshot)?
   * @internal
   */
  hasMemoryFor(bytes: number): boolean {
    return this.alarm.hasRoomFor(bytes);
  }

  /** Our Open container-id. */
  get containerId(): string {
    return this.ctx.opts.containerId;
  }

  /** @internal single node at start: deletes the dynamic nodes of connections that did not survive the restart. */
  deleteOrphanDynamicNodes(): Promise<void> {
    return this.ctx.dynamicNodes.deleteOrphans();
  }

  /** @internal */
  get backend(): BrokerBackend {
    return this.ctx.backend;
  }

  /** The queue administration of this broker (docs/management.md): its backend, its queue defaults. */
  queueAdmin(): QueueAdmin {
    return this.ctx.queueAdmin;
  }

  /** The port it listens on. */
  get port(): number {
    return this.boundPort;
  }

  /** `amqp://host:port` (`amqps://` with TLS). */
  get url(): string {
    const h = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `${this.options.tls ? 'amqps' : 'amqp'}://${h}:${this.boundPort}`;
  }

  /** The WebSocket port (0: no WebSocket listener). */
  get wsPort(): number {
    return this.wsListener?.port ?? 0;
  }

  /** `ws://host:port` (`wss://` with TLS), when the WebSocket listener runs. */
  get wsUrl(): string | undefined {
    return this.wsListener?.url;
  }

  /** Starts listening; resolves once the port is bound. */
  async listen(): Promise<void> {
    const tlsOn = this.options.tls !== undefined;
    const onSocket = (s: net.Socket): void =>
      this.accept(s, { address: s.remoteAddress ?? '', port: s.remotePort ?? 0 }, tlsOn);
    const server = this.options.tls
      ? tls.createServer(this.options.tls, onSocket)
      : net.createServer({ noDelay: true }, onSocket);
    // a failed TLS handshake is the peer's problem, not ours
    server.on('tlsClientError', (_err: Error, s: net.Socket) => s.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.ctx.opts.logger.error?.({ err }, 'listener error'));
    this.listener = server;
    this.boundPort = (server.address() as net.AddressInfo).port;
    if (this.options.webSocket !== undefined) {
      const wsListener = new WebSocketListener({
        ...this.options.webSocket,
        host: this.host,
        ...(this.options.tls ? { tls: this.options.tls } : {}),
        maxPayload: this.ctx.opts.maxFrameSize,
        handshakeTimeoutMs: this.ctx.opts.handshakeTimeoutMs,
        logger: this.ctx.opts.logger,
        admit: (address) => this.admitUpgrade(address),
        release: (address) => {
          this.wsPending--;
          this.forgetAddress(address);
        },
        onStream: (stream, remote) => this.accept(stream, remote, tlsOn),
      });
      try {
        await wsListener.listen();
      } catch (err) {
        await new Promise<void>((r) => server.close(() => r()));
        throw err;
      }
      this.wsListener = wsListener;
    }
    this.ctx.backend.on('available', this.onAvailable);
    this.ctx.backend.on('serving', this.onServing);
    this.ctx.backend.on('stolen', this.onStolen);
    this.ctx.backend.on('claimed', this.onClaimed);
    const o = this.ctx.opts;
    const shortest = Math.min(o.idleTimeoutMs > 0 ? o.idleTimeoutMs : 60_000, o.handshakeTimeoutMs);
    const every = Math.max(20, Math.min(1000, Math.floor(shortest / 4)));
    // on the process's one timer of that period (1 s by default: with the disk alarm's and more)
    this.stopSweep = sharedInterval(every, () => this.tickAll(), { ref: false });
    this.alarm.start();
  }

  /** Message counters by outcome and queue (read by the monitoring endpoints). */
  get activity(): Activity {
    return this.ctx.activity;
  }

  /** Consumer links attached here, per queue (monitoring). */
  consumersByQueue(): Map<string, number> {
    return this.ctx.consumers.countByQueue();
  }

  /** Unused link credit of the consumers of `queue` attached here (federation's demand). */
  unusedConsumerCredit(queue: string): number {
    return this.ctx.consumers.unusedCredit(queue);
  }

  /**
   * Calls `listener` when the unused credit of `queue`'s consumers here may have grown, at most
   * once per microtask batch (federation re-reads its demand then); returns the way to stop.
   */
  watchConsumerDemand(queue: string, listener: () => void): () => void {
    return this.ctx.consumers.watchDemand(queue, listener);
  }

  /** Every open connection, for monitoring. */
  connections(): ConnectionInfo[] {
    const out: ConnectionInfo[] = [];
    for (const c of this.conns) if (!c.closed) out.push(c.info());
    return out;
  }

  /** Counters and current connection and consumer counts. */
  stats(): BrokerServerStats {
    return {
      ...this.ctx.counters,
      connections: this.conns.size,
      consumers: this.ctx.consumers.size,
      alarms: this.alarm.alarms(),
    };
  }

  /** Closes every connection with `error` (they may reconnect unless the listener is closed). */
  closeAll(error: AmqpErrorBody): void {
    for (const c of [...this.conns]) c.close(error);
  }

  /**
   * Stops listening, closes every connection (amqp:connection:forced) and waits for the sockets
   * to go. The backend is the caller's to close.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.stopSweep?.();
    this.alarm.stop();
    this.ctx.backend.off('available', this.onAvailable);
    this.ctx.backend.off('serving', this.onServing);
    this.ctx.backend.off('stolen', this.onStolen);
    this.ctx.backend.off('claimed', this.onClaimed);
    this.ctx.dynamicNodes.close();
    // stop accepting on both ports; every connection, TCP or WebSocket, gets the AMQP Close
    const closed = Promise.all([
      this.listener ? new Promise<void>((r) => this.listener!.close(() => r())) : undefined,
      this.wsListener?.close(),
    ]);
    this.closeAll({ condition: 'amqp:connection:forced', description: 'broker stopping' });
    const deadline = Date.now() + 2000;
    while (this.sockets.size > 0 && Date.now() < deadline) await sleep(10);
    for (const s of this.sockets) s.destroy();
    this.wsListener?.terminate();
    await closed;
  }

  /** A connected byte stream (TCP, TLS or a WebSocket's) from `remote`: one AMQP connection. */
  private accept(socket: Duplex, remote: { address: string; port: number }, tls: boolean): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const o = this.ctx.opts;
    const address = remote.address;
    const fromAddress = this.perAddress.get(address) ?? 0;
    let refuse: AmqpErrorBody | undefined;
    let refusing = false;
    const overTotal = this.conns.size - this.refusing + this.wsPending >= o.maxConnections;
    if (overTotal || fromAddress >= o.maxConnectionsPerAddress) {
      if (this.refusing >= MAX_REFUSING) {
        this.ctx.counters.connectionsRefused++;
        socket.destroy();
        return;
      }
      refusing = true;
      this.refusing++;
      this.ctx.counters.connectionsRefused++;
      refuse = {
        condition: 'amqp:resource-limit-exceeded',
        description: overTotal
          ? `too many connections (limit ${o.maxConnections})`
          : `too many connections from ${address} (limit ${o.maxConnectionsPerAddress})`,
      };
      if (!overTotal)
        o.logger.warn?.(
          { address, limit: o.maxConnectionsPerAddress },
          'connection refused: per-address cap',
        );
    } else {
      this.ctx.counters.connectionsAccepted++;
      this.perAddress.set(address, fromAddress + 1);
    }
    this.sockets.add(socket);
    const port = new SocketPort(
      socket,
      { clock: Date.now, endGraceMs: END_GRACE_MS },
      {
        data: (chunk, at) => conn.receive(chunk, at),
        drain: () => conn.writable(),
        error: (err) => this.ctx.opts.logger.debug?.({ err }, 'socket error'),
        close: () => {
          this.sockets.delete(socket);
          if (this.conns.delete(conn)) {
            if (refusing) this.refusing--;
            else this.forgetAddress(address);
          }
          conn.socketClosed();
        },
      },
    );
    const io: ConnectionIo = {
      peer: { address, tls },
      write: (chunks) => port.write(chunks),
      backlog: () => port.backlog(),
      end: () => port.end(),
    };
    const conn = new BrokerConnection(this.ctx, io, Date.now(), refuse);
    conn.remote = `${address.includes(':') ? `[${address}]` : address}:${remote.port}`;
    this.conns.add(conn);
  }

  /**
   * Whether a socket just accepted on the WebSocket port may wait for its upgrade: it takes a
   * place under `maxConnections` and `maxConnectionsPerAddress` like a TCP connection
   * (docs/websocket.md#limits), given back by the listener when it upgrades (and `accept`
   * counts it as a connection) or goes.
   */
  private admitUpgrade(address: string): boolean {
    const o = this.ctx.opts;
    const fromAddress = this.perAddress.get(address) ?? 0;
    const overTotal = this.conns.size - this.refusing + this.wsPending >= o.maxConnections;
    if (this.stopping || overTotal || fromAddress >= o.maxConnectionsPerAddress) {
      this.ctx.counters.connectionsRefused++;
      // as over TCP: the per-address cap is worth a line (one client misbehaving), the total is not
      if (!this.stopping && !overTotal)
        o.logger.warn?.({ address, limit: o.maxConnectionsPerAddress }, 'WebSocket refused: per-address cap');
      return false;
    }
    this.wsPending++;
    this.perAddress.set(address, fromAddress + 1);
    return true;
  }

  /** One connection (or waiting WebSocket socket) from `address` fewer. */
  private forgetAddress(address: string): void {
    const n = (this.perAddress.get(address) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(address);
    else this.perAddress.set(address, n);
  }

  private tickAll(): void {
    const now = Date.now();
    for (const c of this.conns) c.tick(now);
  }
}
