/**
 * An open WebSocket as an engine's output and input directly, without a Node stream: the browser
 * build's port (docs/websocket.md#browser). The binding's rules are those of websocket-stream.ts
 * (websocket-binding.ts): incoming binary messages joined into the byte stream, a text message
 * closes with 1003, what we write is cut into binary messages of at most `maxMessageBytes`.
 *
 * A browser's WebSocket has no write callback: its `bufferedAmount` is the backlog, so the
 * client's congestion rule (the SocketPort's `writableLength`) reads the same number.
 */
import type { SocketEvents } from './engine-driver.js';
import {
  asBytes,
  MIN_WEBSOCKET_MESSAGE_BYTES,
  messageBytesForPeer,
  NO_STATUS,
  NORMAL_CLOSURE,
  OPEN,
  UNSUPPORTED_DATA,
  type WebSocketLike,
  WebSocketStreamError,
} from './websocket-binding.js';

/** A WebSocket that also reports its send backlog (WHATWG `bufferedAmount`). */
export interface BufferedWebSocket extends WebSocketLike {
  readonly bufferedAmount?: number;
}

/** One open WebSocket as the connection's port: write / backlog / end / destroy, events as calls. */
export class WebSocketPort {
  /** Largest binary message written. */
  maxMessageBytes = MIN_WEBSOCKET_MESSAGE_BYTES;
  private gone = false;

  constructor(
    private readonly ws: BufferedWebSocket,
    options: { clock: () => number },
    events: SocketEvents,
  ) {
    const clock = options.clock;
    ws.binaryType = 'arraybuffer';
    const fail = (err: Error): void => {
      if (this.gone) return;
      this.gone = true;
      events.error(err);
      events.close();
    };
    ws.addEventListener('message', (ev) => {
      if (this.gone) return;
      const bytes = asBytes(ev.data);
      if (bytes === undefined) {
        ws.close(UNSUPPORTED_DATA, 'AMQP over WebSocket takes binary messages only');
        fail(new WebSocketStreamError('a text message (AMQP over WebSocket is binary only)'));
        return;
      }
      if (bytes.length > 0) events.data(bytes, clock(), false);
    });
    ws.addEventListener('close', (ev) => {
      if (ev.code === NORMAL_CLOSURE || ev.code === NO_STATUS) {
        if (this.gone) return;
        this.gone = true;
        events.close();
      } else fail(new WebSocketStreamError(`WebSocket closed with ${ev.code} ${ev.reason}`.trim(), ev.code));
    });
    ws.addEventListener('error', (ev) => {
      const cause = (ev as { error?: unknown }).error;
      fail(cause instanceof Error ? cause : new WebSocketStreamError('WebSocket error'));
    });
  }

  get destroyed(): boolean {
    return this.gone || this.ws.readyState !== OPEN;
  }

  /** The peer's Open arrived: send messages as large as it takes (messageBytesForPeer). */
  fitMessagesToPeer(peerMaxFrameSize: number | undefined): void {
    this.maxMessageBytes = messageBytesForPeer(peerMaxFrameSize);
  }

  /** The batch, cut into binary messages of at most maxMessageBytes. */
  write(chunks: Uint8Array[]): void {
    if (this.destroyed) return;
    const max = Math.max(1, this.maxMessageBytes);
    for (const chunk of chunks)
      for (let at = 0; at < chunk.length; at += max)
        this.ws.send(chunk.subarray(at, Math.min(chunk.length, at + max)));
  }

  backlog(): number {
    return this.ws.bufferedAmount ?? 0;
  }

  /** A WebSocket has no half-close: closing it sends what was queued first (RFC 6455 7.1.1). */
  end(): void {
    this.destroy();
  }

  /** Close the WebSocket now; its close event reports `close` (once), as a socket's does. */
  destroy(): void {
    if (this.ws.readyState === OPEN) this.ws.close(NORMAL_CLOSURE);
  }
}
