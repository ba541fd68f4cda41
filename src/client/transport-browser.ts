/**
 * The browser build's transport (docs/websocket.md#browser): the build swaps transport.ts for this
 * file. Only `ws://` and `wss://` members, opened with the page's global `WebSocket` and run
 * through a WebSocketPort (no Node stream). TLS is the browser's: connect()'s `tls` and `dial`
 * options do not apply here.
 */
import { ClientError } from '../errors.js';
import { WebSocketPort } from '../protocol/index.js';
import { isWebSocketScheme } from '../wire-extensions.js';
import { beforeOpenFailure, noOpenFailure, socketFailure } from './connect-errors.js';
import { watchFirstByte } from './first-byte.js';
import { type AttemptOptions, now, PhysicalConnection } from './physical.js';
import type { connectPhysical as NodeConnectPhysical } from './transport.js';
import {
  globalWebSocket,
  type OpenedWebSocket,
  openWebSocket,
  type WebSocketFactory,
} from './websocket-open.js';

/** The page's WebSocket; TLS options cannot be given to it (the browser verifies certificates). */
const pageWebSocket: WebSocketFactory = async (url, protocols) => {
  const WebSocket = globalWebSocket();
  if (WebSocket === undefined) throw new Error('no global WebSocket in this runtime');
  return { ws: new WebSocket(url, protocols), sendCallbacks: false };
};

/** Open a WebSocket to `server`, run SASL and exchange Open. Resolves once the peer's Open arrived. */
export const connectPhysical: typeof NodeConnectPhysical = (opts: AttemptOptions) => {
  const { server } = opts;
  return new Promise<PhysicalConnection>((resolve, reject) => {
    let settled = false;
    let phys: PhysicalConnection | undefined;
    let opened: OpenedWebSocket | undefined;
    const opening = new AbortController();
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      firstByte.stop();
      opts.signal?.removeEventListener('abort', onAbort);
      opening.abort();
      if (phys) phys.destroy(err);
      else opened?.ws.close();
      reject(err);
    };
    const onAbort = (): void =>
      fail(new ClientError('quorate:aborted', 'connect aborted', { cause: opts.signal?.reason }));
    const timer = setTimeout(
      () => fail(noOpenFailure(server.host, server.port, opts.timeoutMs)),
      opts.timeoutMs,
    );
    // a member that accepts the WebSocket but sends no AMQP byte is held back sooner (first-byte.ts)
    const firstByte = watchFirstByte(opts, fail);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (!isWebSocketScheme(server.scheme)) {
      fail(
        new ClientError(
          'quorate:connect-failed',
          `the browser build connects over WebSocket only (ws:// or wss://), not ${server.scheme}://`,
        ),
      );
      return;
    }
    const host = server.host.includes(':') ? `[${server.host}]` : server.host;
    const url = `${server.scheme}://${host}:${server.port}${server.path ?? '/'}`;
    openWebSocket(url, { signal: opening.signal, factory: pageWebSocket }).then(
      (ws) => {
        opened = ws;
        if (settled) {
          ws.ws.close();
          return;
        }
        let port: WebSocketPort | undefined;
        phys = new PhysicalConnection(
          (events) => {
            port = new WebSocketPort(
              ws.ws,
              { clock: now },
              // each call forwarded: the connection's events are methods of a class (physical.ts),
              // which a spread of the object would leave behind
              {
                data: (chunk, at, more) => {
                  firstByte.heard();
                  events.data(chunk, at, more);
                },
                error: (err) => events.error(err),
                close: () => events.close(),
              },
            );
            return port;
          },
          server,
          opts,
        );
        phys.setHandler({
          onEvent: (ev, p) => {
            if (ev.type !== 'remote-open' || settled) return;
            // before Open we sent the smallest messages any peer takes; now we know its limit
            port?.fitMessagesToPeer(ev.open.maxFrameSize);
            settled = true;
            clearTimeout(timer);
            firstByte.stop();
            opts.signal?.removeEventListener('abort', onAbort);
            // stop routing: events from here on queue until the logical connection takes over
            p.setHandler(undefined);
            resolve(p);
          },
          onLost: (_p, error) => fail(beforeOpenFailure(server, error, undefined)),
        });
      },
      (err: unknown) =>
        fail(socketFailure(server.host, server.port, err instanceof Error ? err : new Error(String(err)))),
    );
    if (opts.signal?.aborted) onAbort();
  });
};
