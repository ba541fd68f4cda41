/**
 * Opens AMQP over WebSocket for `ws://` and `wss://` members in Node (docs/websocket.md#client): a
 * WebSocket asking for the subprotocol `amqp` (websocket-open.ts), as the byte stream the
 * connection runs over.
 *
 * Which WebSocket is used is decided by `defaultWebSocketFactory`: the runtime's global
 * `WebSocket` when there is one and no TLS options must be passed, else the `ws` package, loaded
 * only when first needed. The browser build does not take this file (transport-browser.ts).
 */
import { WebSocketStream } from '../protocol/websocket-stream.js';
import {
  globalWebSocket,
  type OpeningWebSocket,
  openWebSocket,
  type WebSocketFactory,
  type WebSocketTlsOptions,
} from './websocket-open.js';

export type { OpeningWebSocket, WebSocketFactory, WebSocketTlsOptions };

/** The global `WebSocket` (a browser, Node 22+) unless TLS options need the `ws` package. */
export const defaultWebSocketFactory: WebSocketFactory = async (url, protocols, tls) => {
  const global = globalWebSocket();
  if (global !== undefined && tls === undefined)
    return { ws: new global(url, protocols), sendCallbacks: false };
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(url, protocols, { perMessageDeflate: false, ...tls });
  return { ws: ws as unknown as OpeningWebSocket, sendCallbacks: true };
};

/**
 * Opens a WebSocket to `url` with the subprotocol `amqp`; resolves with it as a byte stream once
 * open. Rejects when it fails or closes first, or when `signal` aborts.
 */
export async function dialWebSocket(
  url: string,
  options: { tls?: WebSocketTlsOptions; signal?: AbortSignal },
): Promise<WebSocketStream> {
  const { ws, sendCallbacks } = await openWebSocket(url, { ...options, factory: defaultWebSocketFactory });
  return new WebSocketStream(ws, { sendCallbacks });
}
