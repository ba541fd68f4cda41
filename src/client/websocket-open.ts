/**
 * Opens a WebSocket asking for the subprotocol `amqp` (docs/websocket.md#client) and resolves once
 * it is open. Imports no Node module: the browser build opens its WebSockets here too, with the
 * global `WebSocket` (websocket-dial.ts adds the `ws` package and the Duplex for Node).
 */
import type { WebSocketLike } from '../protocol/index.js';

/** The `tls` option of connect(), handed to the `ws` package as is (ca, cert, key, servername...). */
export type WebSocketTlsOptions = object;

/** The WebSocket subprotocol of the OASIS AMQP WebSocket binding. */
const AMQP_SUBPROTOCOL = 'amqp';

/** A WebSocket being opened: the WHATWG surface, plus `open`. */
export interface OpeningWebSocket extends WebSocketLike {
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (ev: unknown) => void): void;
}

/** An open WebSocket, and whether its `send` takes a completion callback (the `ws` package). */
export interface OpenedWebSocket {
  ws: OpeningWebSocket;
  sendCallbacks: boolean;
}

/** Makes a WebSocket to `url` asking for `protocols`; `tls` only where the runtime takes it. */
export type WebSocketFactory = (
  url: string,
  protocols: string[],
  tls: WebSocketTlsOptions | undefined,
) => Promise<OpenedWebSocket>;

type GlobalWebSocket = new (url: string, protocols: string[]) => OpeningWebSocket;

/** The runtime's global `WebSocket` (a browser, Node 22+), or undefined. */
export function globalWebSocket(): GlobalWebSocket | undefined {
  return (globalThis as { WebSocket?: GlobalWebSocket }).WebSocket;
}

/** Error of a WebSocket that closed or failed before it opened. */
function openFailure(ev: unknown): Error {
  const cause = (ev as { error?: unknown; message?: unknown }).error;
  if (cause instanceof Error) return cause;
  const message = (ev as { message?: unknown }).message;
  return new Error(typeof message === 'string' ? message : 'WebSocket failed to open');
}

/**
 * Opens a WebSocket to `url` with the subprotocol `amqp` through `factory`; resolves once open.
 * Rejects when it fails or closes first, or when `signal` aborts.
 */
export async function openWebSocket(
  url: string,
  options: { tls?: WebSocketTlsOptions; signal?: AbortSignal; factory: WebSocketFactory },
): Promise<OpenedWebSocket> {
  const opened = await options.factory(url, [AMQP_SUBPROTOCOL], options.tls);
  const { ws } = opened;
  return new Promise<OpenedWebSocket>((resolve, reject) => {
    let done = false;
    const settle = (err?: Error): void => {
      if (done) return;
      done = true;
      options.signal?.removeEventListener('abort', onAbort);
      if (err) {
        ws.close();
        reject(err);
      } else resolve(opened);
    };
    const onAbort = (): void => settle(new Error('WebSocket open aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    ws.addEventListener('open', () => settle());
    ws.addEventListener('error', (ev) => settle(openFailure(ev)));
    ws.addEventListener('close', (ev) => settle(new Error(`WebSocket closed before open (${ev.code})`)));
  });
}
