/**
 * A WebSocket as the byte stream AMQP runs over (the OASIS AMQP WebSocket binding, docs/websocket.md):
 * the binding maps no AMQP frame to a WebSocket message, so incoming binary messages are simply
 * joined into the byte stream (a frame may span messages, a message may hold several) and what we
 * write is cut into binary messages of at most `maxMessageBytes`. A text message breaks the
 * binding: the WebSocket is closed with 1003 (unsupported data) and the stream fails.
 *
 * It takes the WHATWG WebSocket surface only (`binaryType`, `send`, `close`, `addEventListener`),
 * which both a browser's `WebSocket` and the `ws` package's implement, so both roles and both
 * runtimes share it. Node-only: the stream is a `node:stream` Duplex, the SocketPort's input (a
 * browser runs the same binding through websocket-port.ts, no Duplex).
 */
import { Duplex } from 'node:stream';
import {
  asBytes,
  MAX_WEBSOCKET_MESSAGE_BYTES,
  MIN_WEBSOCKET_MESSAGE_BYTES,
  messageBytesForPeer,
  NO_STATUS,
  NORMAL_CLOSURE,
  OPEN,
  UNSUPPORTED_DATA,
  type WebSocketLike,
  WebSocketStreamError,
  type WebSocketStreamOptions,
} from './websocket-binding.js';

export {
  MAX_WEBSOCKET_MESSAGE_BYTES,
  MIN_WEBSOCKET_MESSAGE_BYTES,
  type WebSocketLike,
  WebSocketStreamError,
  type WebSocketStreamOptions,
};

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

  /** The peer's Open arrived: send messages as large as it takes (messageBytesForPeer). */
  fitMessagesToPeer(peerMaxFrameSize: number | undefined): void {
    this.maxMessageBytes = messageBytesForPeer(peerMaxFrameSize);
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
