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
import type { WebSocketLike } from '../../protocol/index.js';
import { WebSocketStream } from '../../protocol/websocket-stream.js';
import type { BrokerLogger } from './options.js';

/** The WebSocket subprotocol of the OASIS AMQP WebSocket binding. */
export const AMQP_SUBPROTOCOL = 'amqp';

/**
 * Largest upgrade request head taken (answered 431 beyond). Set here rather than left to node's
 * `--max-http-header-size`; room for a browser's cookies of the host (docs/websocket.md#limits).
 */
export const WS_MAX_HEADER_BYTES = 16 * 1024;

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
  /**
   * A socket must have sent its whole upgrade request within this (the AMQP handshake deadline:
   * one deadline for everything a client does before it is served), or it is closed.
   */
  handshakeTimeoutMs: number;
  logger: BrokerLogger;
  /**
   * A socket was accepted from `address`: may it wait for its upgrade? True takes a place under
   * the broker's connection caps until `release(address)`; false: refused (503, closed).
   */
  admit(address: string): boolean;
  /** Gives back the place `admit` gave (the socket upgraded, just before `onStream`, or went). */
  release(address: string): void;
  /** An accepted WebSocket as a byte stream, with the peer's address. */
  onStream(stream: Duplex, remote: { address: string; port: number }): void;
}

/** Is a request with this `Origin` header value allowed? */
export function originAllowed(origin: string | undefined, allow: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allow.includes('*')) return true;
  return allow.some((a) => a.toLowerCase() === origin.toLowerCase());
}

/** What the upgrade request's faults are answered with (any other fault: closed without a word). */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** Answers `status` and closes: once the answer has left, not when the peer gets round to it. */
function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
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
  /** Admitted sockets not yet upgraded, each with what gives its place back (once). */
  private readonly waiting = new WeakMap<Duplex, () => void>();
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
    const deadline = this.options.handshakeTimeoutMs;
    // node counts both deadlines from the accept, so a socket that sends nothing goes too; an
    // upgraded socket leaves node's HTTP handling and its deadlines
    const limits: http.ServerOptions = {
      headersTimeout: deadline,
      requestTimeout: deadline,
      // node checks both deadlines only this often (default 30 s)
      connectionsCheckingInterval: Math.min(1_000, deadline),
      maxHeaderSize: WS_MAX_HEADER_BYTES,
    };
    const server = this.options.tls
      ? https.createServer({ ...this.options.tls, ...limits }, plainHttp)
      : http.createServer(limits, plainHttp);
    // the socket the HTTP parser reads (after TLS, with wss): counted from there, as over TCP
    server.on(this.options.tls ? 'secureConnection' : 'connection', (s: net.Socket) => this.onSocket(s));
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
    server.on('tlsClientError', (_err: Error, s: net.Socket) => s.destroy());
    server.on('clientError', (err: NodeJS.ErrnoException, s: Duplex) => {
      const status = CLIENT_ERROR_STATUS[err.code ?? ''];
      if (status !== undefined && s.writable) refuse(s, status, err.message);
      else s.destroy();
    });
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

  private onSocket(socket: net.Socket): void {
    const address = socket.remoteAddress ?? '';
    if (!this.options.admit(address)) {
      refuse(socket, 503, 'too many connections');
      return;
    }
    let held = true;
    const giveBack = (): void => {
      if (!held) return;
      held = false;
      this.options.release(address);
    };
    this.waiting.set(socket, giveBack);
    socket.once('close', giveBack);
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const giveBack = this.waiting.get(socket);
    this.waiting.delete(socket);
    if (giveBack === undefined) {
      // refused when accepted (the request arrived before our answer left): not ours to serve
      socket.destroy();
      return;
    }
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
      // from now on `onStream`'s connection holds the place under the caps
      giveBack();
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
