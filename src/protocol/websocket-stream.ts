/**
 * A WebSocket as the byte stream AMQP runs over (the OASIS AMQP WebSocket binding, docs/websocket.md):
 * the binding maps no AMQP frame to a WebSocket message, so incoming binary messages are simply
 * joined into the byte stream (a frame may span messages, a message may hold several) and what we
 * write is cut into binary messages of at most `maxMessageBytes`. A text message breaks the
 * binding: the WebSocket is closed with 1003 (unsupported data) and the stream fails.
 *
 * It takes the WHATWG WebSocket surface only (`binaryType`, `send`, `close`, `addEventListener`),
 * which both a browser's `WebSocket` and the `ws` package's implement, so both roles and both
 * runtimes share it. Node-only: the stream is a `node:stream` Duplex, the SocketPort's input.
 */
import { Duplex } from 'node:stream';

/** WebSocket `readyState` OPEN (WHATWG). */
const OPEN = 1;
/** Close code: normal closure (RFC 6455 7.4.1). */
const NORMAL_CLOSURE = 1000;
/** Close code: the peer gave none (RFC 6455 7.1.5). */
const NO_STATUS = 1005;
/** Close code: a data type the endpoint cannot accept (RFC 6455 7.4.1): a text message. */
const UNSUPPORTED_DATA = 1003;
/** Until told the peer's limit: the smallest max-frame-size AMQP allows (spec 2.7.1), safe for any peer. */
export const MIN_WEBSOCKET_MESSAGE_BYTES = 512;
/**
 * Once the peer's Open names its max-frame-size, the messages we send grow to it, up to this: big
 * enough that a 1 MiB message crosses in a few dozen WebSocket messages, small enough that one
 * message never holds the socket long (docs/websocket.md#binding).
 */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024;

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

function asBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data) && data.every((d) => d instanceof Uint8Array)) return Buffer.concat(data);
  return undefined;
}

/** One open WebSocket as a Duplex of AMQP bytes. */
export class WebSocketStream extends Duplex {
  /** Largest binary message written (raise it to the peer's max-frame-size once known). */
  maxMessageBytes: number;
  private readonly sendCallbacks: boolean;

  constructor(
    private readonly ws: WebSocketLike,
    options: WebSocketStreamOptions,
  ) {
    super({ allowHalfOpen: false });
    this.sendCallbacks = options.sendCallbacks;
    this.maxMessageBytes = options.maxMessageBytes ?? MIN_WEBSOCKET_MESSAGE_BYTES;
    ws.binaryType = 'arraybuffer';
    ws.addEventListener('message', (ev) => {
      const bytes = asBytes(ev.data);
      if (bytes === undefined) {
        ws.close(UNSUPPORTED_DATA, 'AMQP over WebSocket takes binary messages only');
        this.destroy(new WebSocketStreamError('a text message (AMQP over WebSocket is binary only)'));
        return;
      }
      if (bytes.length > 0) this.push(bytes);
    });
    ws.addEventListener('close', (ev) => {
      // a clean close ends the byte stream (the Duplex closes once both sides are done)
      if (ev.code === NORMAL_CLOSURE || ev.code === NO_STATUS) this.push(null);
      else
        this.destroy(
          new WebSocketStreamError(`WebSocket closed with ${ev.code} ${ev.reason}`.trim(), ev.code),
        );
    });
    ws.addEventListener('error', (ev) => {
      const cause = (ev as { error?: unknown }).error;
      this.destroy(cause instanceof Error ? cause : new WebSocketStreamError('WebSocket error'));
    });
  }

  /**
   * The peer's Open arrived: it takes frames (so WebSocket messages, docs/websocket.md#binding) of
   * up to `peerMaxFrameSize` bytes (absent: no limit), so send messages that large, within
   * MAX_WEBSOCKET_MESSAGE_BYTES and never below MIN_WEBSOCKET_MESSAGE_BYTES.
   */
  fitMessagesToPeer(peerMaxFrameSize: number | undefined): void {
    const peer = peerMaxFrameSize ?? MAX_WEBSOCKET_MESSAGE_BYTES;
    this.maxMessageBytes = Math.max(MIN_WEBSOCKET_MESSAGE_BYTES, Math.min(MAX_WEBSOCKET_MESSAGE_BYTES, peer));
  }

  override _read(): void {
    // messages are pushed as they arrive (a WebSocket cannot be paused portably)
  }

  override _write(chunk: Uint8Array, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.ws.readyState !== OPEN) {
      done(new WebSocketStreamError('WebSocket not open'));
      return;
    }
    const max = Math.max(1, this.maxMessageBytes);
    let pending = Math.ceil(chunk.length / max);
    if (pending === 0) {
      done();
      return;
    }
    let failed = false;
    const sent = (err?: Error): void => {
      if (failed) return;
      if (err) {
        failed = true;
        done(err);
      } else if (--pending === 0) done();
    };
    for (let at = 0; at < chunk.length; at += max) {
      const part = chunk.subarray(at, Math.min(chunk.length, at + max));
      if (this.sendCallbacks) this.ws.send(part, sent);
      else {
        this.ws.send(part);
        sent();
      }
    }
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.ws.readyState === OPEN) this.ws.close(NORMAL_CLOSURE);
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (this.ws.readyState === OPEN) this.ws.close(NORMAL_CLOSURE);
    done(err);
  }
}
