/**
 * Opens AMQP over WebSocket for `ws://` and `wss://` members (docs/websocket.md#client): a
 * WebSocket asking for the subprotocol `amqp`, as the byte stream the connection runs over.
 *
 * Which WebSocket is used: the runtime's global `WebSocket` (Node 22+) when there is one and no
 * TLS options must be passed, else the `ws` package, loaded only when first needed.
 */
import { type WebSocketLike, WebSocketStream } from '../protocol/index.js';

/** The `tls` option of connect(), handed to the `ws` package as is (ca, cert, key, servername...). */
export type WebSocketTlsOptions = object;

/** The WebSocket subprotocol of the OASIS AMQP WebSocket binding. */
const AMQP_SUBPROTOCOL = 'amqp';

/** A WebSocket being opened: the WHATWG surface, plus `open`. */
interface OpeningWebSocket extends WebSocketLike {
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (ev: unknown) => void): void;
}

type GlobalWebSocket = new (url: string, protocols: string[]) => OpeningWebSocket;

/**
 * Makes a WebSocket to `url` asking for `protocols`: the global `WebSocket` (Node 22+) unless
 * TLS options need the `ws` package.
 */
async function openWebSocket(
  url: string,
  protocols: string[],
  tls: WebSocketTlsOptions | undefined,
): Promise<{ ws: OpeningWebSocket; sendCallbacks: boolean }> {
  const global = (globalThis as { WebSocket?: GlobalWebSocket }).WebSocket;
  if (global !== undefined && tls === undefined)
    return { ws: new global(url, protocols), sendCallbacks: false };
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(url, protocols, { perMessageDeflate: false, ...tls });
  return { ws: ws as unknown as OpeningWebSocket, sendCallbacks: true };
}

/** Error of a WebSocket that closed or failed before it opened. */
function openFailure(ev: unknown): Error {
  const cause = (ev as { error?: unknown; message?: unknown }).error;
  if (cause instanceof Error) return cause;
  const message = (ev as { message?: unknown }).message;
  return new Error(typeof message === 'string' ? message : 'WebSocket failed to open');
}

/**
 * Opens a WebSocket to `url` with the subprotocol `amqp`; resolves with it as a byte stream once
 * open. Rejects when it fails or closes first, or when `signal` aborts.
 */
export async function dialWebSocket(
  url: string,
  options: { tls?: WebSocketTlsOptions; signal?: AbortSignal },
): Promise<WebSocketStream> {
  const { ws, sendCallbacks } = await openWebSocket(url, [AMQP_SUBPROTOCOL], options.tls);
  return new Promise<WebSocketStream>((resolve, reject) => {
    let done = false;
    const settle = (err?: Error): void => {
      if (done) return;
      done = true;
      options.signal?.removeEventListener('abort', onAbort);
      if (err) {
        ws.close();
        reject(err);
      } else resolve(new WebSocketStream(ws, { sendCallbacks }));
    };
    const onAbort = (): void => settle(new Error('WebSocket open aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    ws.addEventListener('open', () => settle());
    ws.addEventListener('error', (ev) => settle(openFailure(ev)));
    ws.addEventListener('close', (ev) => settle(new Error(`WebSocket closed before open (${ev.code})`)));
    // given up while the `ws` package loaded: the abort event has already fired
    if (options.signal?.aborted) onAbort();
  });
}
