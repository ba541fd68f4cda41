/**
 * The OASIS AMQP WebSocket binding's rules shared by both ways of running it (docs/websocket.md#binding):
 * the Node Duplex (websocket-stream.ts) and the browser's port (websocket-port.ts). Imports no Node
 * module, so a browser build can take it.
 */

/** WebSocket `readyState` OPEN (WHATWG). */
export const OPEN = 1;
/** Close code: normal closure (RFC 6455 7.4.1). */
export const NORMAL_CLOSURE = 1000;
/** Close code: the peer gave none (RFC 6455 7.1.5). */
export const NO_STATUS = 1005;
/** Close code: a data type the endpoint cannot accept (RFC 6455 7.4.1): a text message. */
export const UNSUPPORTED_DATA = 1003;
/** Until told the peer's limit: the smallest max-frame-size AMQP allows (spec 2.7.1), safe for any peer. */
export const MIN_WEBSOCKET_MESSAGE_BYTES = 512;
/**
 * Once the peer's Open names its max-frame-size, the messages we send grow to it, up to this: big
 * enough that a 1 MiB message crosses in a few dozen WebSocket messages, small enough that one
 * message never holds the socket long (docs/websocket.md#binding).
 */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024;

/**
 * The largest message to send once the peer's Open arrived: it takes frames (so WebSocket
 * messages, docs/websocket.md#binding) of up to `peerMaxFrameSize` bytes (absent: no limit), so
 * messages that large, within MAX_WEBSOCKET_MESSAGE_BYTES and never below MIN_WEBSOCKET_MESSAGE_BYTES.
 */
export function messageBytesForPeer(peerMaxFrameSize: number | undefined): number {
  const peer = peerMaxFrameSize ?? MAX_WEBSOCKET_MESSAGE_BYTES;
  return Math.max(MIN_WEBSOCKET_MESSAGE_BYTES, Math.min(MAX_WEBSOCKET_MESSAGE_BYTES, peer));
}

/** The part of a WHATWG `WebSocket` (a browser's, or the `ws` package's) the stream uses. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  /** With the `ws` package a completion callback (used for backpressure); a browser ignores it. */
  send(data: Uint8Array, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (ev: unknown) => void): void;
}

/** The WebSocket failed or broke the binding (a text message). */
export class WebSocketStreamError extends Error {
  constructor(
    message: string,
    /** The WebSocket close code, when the peer closed. */
    readonly code?: number,
  ) {
    super(message);
    this.name = 'WebSocketStreamError';
  }
}

export interface WebSocketStreamOptions {
  /**
   * Writes complete when the WebSocket says it sent them (`send`'s callback, the `ws` package);
   * false: at once (a browser's WebSocket has no callback).
   */
  sendCallbacks: boolean;
  /** Largest message we send; default MIN_WEBSOCKET_MESSAGE_BYTES until raised. */
  maxMessageBytes?: number;
}

/** Joins byte arrays (the `ws` package may hand a message as fragments). */
function concatBytes(parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A message's bytes, or undefined for a text message (which breaks the binding). */
export function asBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data) && data.every((d) => d instanceof Uint8Array)) return concatBytes(data);
  return undefined;
}
