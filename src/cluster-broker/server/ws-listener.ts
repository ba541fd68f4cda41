/**
 * The AMQP-over-WebSocket listener (docs/websocket.md): an HTTP(S) server that takes only
 * WebSocket upgrades asking for the subprotocol `amqp` from an allowed origin, and hands each
 * accepted WebSocket, as a byte stream, to the same connection handling as the TCP listener
 * (limits, SASL, users, permissions apply unchanged).
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContextOptions } from 'node:tls';
import { type WebSocket, WebSocketServer } from 'ws';
import { type WebSocketLike, WebSocketStream } from '../../protocol/index.js';
import type { BrokerLogger } from './options.js';

/** The WebSocket subprotocol of the OASIS AMQP WebSocket binding. */
export const AMQP_SUBPROTOCOL = 'amqp';

/** Options of the WebSocket listener (`--ws-port`, `--ws-allow-origin`). */
export interface WebSocketListenOptions {
  /** Port; 0 picks a free one. */
  port: number;
  /**
   * Browser origins allowed to connect (`https://app.example`), or `*` for any. A request without
   * an `Origin` header (not a browser) is always allowed: the header is a browser's statement,
   * and a non-browser client could send any value anyway (docs/websocket.md#origins).
   */
  allowOrigins?: readonly string[];
}

export interface WebSocketListenerOptions extends WebSocketListenOptions {
  host: string;
  tls?: SecureContextOptions;
  /** Largest WebSocket message taken (the broker's max-frame-size: a message never needs more). */
  maxPayload: number;
  logger: BrokerLogger;
  /** An accepted WebSocket as a byte stream, with the peer's address. */
  onStream(stream: Duplex, remote: { address: string; port: number }): void;
}

/** Is a request with this `Origin` header value allowed? */
export function originAllowed(origin: string | undefined, allow: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allow.includes('*')) return true;
  return allow.some((a) => a.toLowerCase() === origin.toLowerCase());
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function offeredProtocols(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

export class WebSocketListener {
  private server: http.Server | https.Server | undefined;
  private readonly wss: WebSocketServer;
  /** Accepted WebSockets, for `terminate` (a peer may never answer a WebSocket close). */
  private readonly open = new Set<WebSocket>();
  private boundPort = 0;

  constructor(private readonly options: WebSocketListenerOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayload,
      perMessageDeflate: false,
      // onUpgrade takes only requests offering `amqp`: that is the one to answer
      handleProtocols: () => AMQP_SUBPROTOCOL,
    });
  }

  get port(): number {
    return this.boundPort;
  }

  /** `ws://host:port` (`wss://` with TLS). */
  get url(): string {
    const h = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    return `${this.options.tls ? 'wss' : 'ws'}://${h}:${this.boundPort}`;
  }

  async listen(): Promise<void> {
    const plainHttp = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
      res.writeHead(426, { Upgrade: 'websocket', 'Content-Type': 'text/plain', Connection: 'close' });
      res.end('AMQP over WebSocket: upgrade with the subprotocol amqp\n');
    };
    const server = this.options.tls
      ? https.createServer(this.options.tls, plainHttp)
      : http.createServer(plainHttp);
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
    server.on('tlsClientError', (_err: Error, s: net.Socket) => s.destroy());
    server.on('clientError', (_err: Error, s: Duplex) => s.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.options.logger.error?.({ err }, 'WebSocket listener error'));
    this.server = server;
    this.boundPort = (server.address() as net.AddressInfo).port;
  }

  /**
   * Stops accepting: no new upgrade is taken, and requests still being sent are dropped. The
   * accepted WebSockets stay open, so the AMQP side can send its Close on each
   * (amqp:connection:forced, as over TCP) and destroy the leftovers after its grace period.
   * Resolves once every socket of the server has gone.
   */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((r) => server.close(() => r()));
    // sockets still sending a request (never upgraded); upgraded ones are not node's to close
    server.closeAllConnections?.();
    this.wss.close();
    await closed;
  }

  /** Drops the WebSockets still open (after the AMQP side's grace period). */
  terminate(): void {
    for (const ws of this.open) ws.terminate();
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = req.headers.origin;
    if (!originAllowed(origin, this.options.allowOrigins ?? [])) {
      this.options.logger.warn?.({ origin }, 'WebSocket refused: origin not allowed');
      refuse(socket, 403, `origin ${origin} not allowed`);
      return;
    }
    if (!offeredProtocols(req.headers['sec-websocket-protocol']).includes(AMQP_SUBPROTOCOL)) {
      refuse(socket, 400, `the WebSocket subprotocol '${AMQP_SUBPROTOCOL}' is required`);
      return;
    }
    const address = req.socket.remoteAddress ?? '';
    const port = req.socket.remotePort ?? 0;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.open.add(ws);
      ws.once('close', () => this.open.delete(ws));
      (req.socket as net.Socket).setNoDelay?.(true);
      const stream = new WebSocketStream(ws as unknown as WebSocketLike, {
        sendCallbacks: true,
        maxMessageBytes: this.options.maxPayload,
      });
      this.options.onStream(stream, { address, port });
    });
  }
}
