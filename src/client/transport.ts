/**
 * Opens a physical connection in Node: TCP (`node:net`), TLS (`node:tls`), a custom `dial`'s
 * stream, or a WebSocket (`ws://`, `wss://`) as a Duplex; then SASL and Open over it (physical.ts).
 * A failure before the peer's Open is classified (connect-errors.ts). The browser build swaps this
 * file for transport-browser.ts (docs/websocket.md#browser).
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { ClientError } from '../errors.js';
import { SocketPort } from '../protocol/index.js';
import { WebSocketStream } from '../protocol/websocket-stream.js';
import { isWebSocketScheme } from '../wire-extensions.js';
import { beforeOpenFailure, closedBeforeOpen, noOpenFailure, socketFailure } from './connect-errors.js';
import { watchFirstByte } from './first-byte.js';
import { type AttemptOptions, END_GRACE_MS, now, PhysicalConnection } from './physical.js';
import { slabReads } from './slab-reads.js';
import { dialWebSocket } from './websocket-dial.js';

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
      firstByte.stop();
      opts.signal?.removeEventListener('abort', onAbort);
      attempt.abort(err);
      if (phys) phys.destroy(err);
      else socket?.destroy();
      reject(err);
    };
    const onAbort = () =>
      fail(new ClientError('quorate:aborted', 'connect aborted', { cause: opts.signal?.reason }));
    const timer = setTimeout(
      () => fail(noOpenFailure(server.host, server.port, opts.timeoutMs)),
      opts.timeoutMs,
    );
    const firstByte = watchFirstByte(opts, fail);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const onConnected = () => {
      if (settled || !socket) return;
      socket.removeListener('error', onSocketError);
      const stream = socket;
      phys = new PhysicalConnection(
        (events) => new SocketPort(stream, { clock: now, endGraceMs: END_GRACE_MS }, events),
        server,
        opts,
      );
      phys.setHandler({
        onEvent: (ev, p) => {
          if (ev.type !== 'remote-open' || settled) return;
          // before Open we sent the smallest messages any peer takes; now we know its limit
          if (stream instanceof WebSocketStream) stream.fitMessagesToPeer(ev.open.maxFrameSize);
          settled = true;
          clearTimeout(timer);
          firstByte.stop();
          opts.signal?.removeEventListener('abort', onAbort);
          socket?.removeListener('data', noteFirstBytes);
          // stop routing: events from here on queue until the logical connection takes over
          p.setHandler(undefined);
          resolve(p);
        },
        onLost: (_p, error) => fail(beforeOpenFailure(server, error, firstBytes.seen)),
      });
      if (server.scheme === 'amqp') socket.on('data', noteFirstBytes);
      socket.once('data', () => firstByte.heard());
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
          stream.on('error', onSocketError);
          onConnected();
        },
        (err: unknown) => fail(socketFailure(server.host, server.port, asError(err))),
      );
    } else {
      socket =
        server.scheme === 'amqps'
          ? tls.connect({ host: server.host, port: server.port, servername, ...opts.tls }, onConnected)
          : net.connect(
              { host: server.host, port: server.port, onread: slabReads(() => socket) },
              onConnected,
            );
      socket.on('error', onSocketError);
    }
    if (opts.signal?.aborted) onAbort();
  });
}
