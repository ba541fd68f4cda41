/**
 * The browser build's WebSocketPort sends the message sizes of the binding
 * (docs/websocket.md#binding): 512 bytes until the peer's Open, then the peer's max-frame-size
 * within 64 KiB, as the Node WebSocketStream does.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_WEBSOCKET_MESSAGE_BYTES,
  MIN_WEBSOCKET_MESSAGE_BYTES,
  WebSocketPort,
} from '../../src/protocol/index.js';

/** A browser-like WebSocket that is open and records the size of every message sent. */
function recordingWebSocket() {
  const sent: number[] = [];
  const ws = {
    binaryType: 'blob',
    readyState: 1,
    bufferedAmount: 0,
    send: (data: Uint8Array) => {
      sent.push(data.length);
    },
    close: () => {},
    addEventListener: () => {},
  };
  return { ws, sent };
}

const noEvents = { data: () => {}, error: () => {}, close: () => {} };

describe('WebSocketPort message size', () => {
  it('sends 512-byte messages before Open, then the peer max-frame-size within 64 KiB', () => {
    const { ws, sent } = recordingWebSocket();
    const port = new WebSocketPort(ws, { clock: () => 0 }, noEvents);
    const bytes = new Uint8Array(200_000);

    port.write([bytes]);
    expect(Math.max(...sent)).toBe(MIN_WEBSOCKET_MESSAGE_BYTES);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(bytes.length);

    sent.length = 0;
    port.fitMessagesToPeer(10_000);
    port.write([bytes]);
    expect(Math.max(...sent)).toBe(10_000);

    sent.length = 0;
    port.fitMessagesToPeer(1024 * 1024);
    port.write([bytes]);
    expect(Math.max(...sent)).toBe(MAX_WEBSOCKET_MESSAGE_BYTES);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(bytes.length);

    sent.length = 0;
    port.fitMessagesToPeer(100);
    port.write([bytes]);
    expect(Math.max(...sent)).toBe(MIN_WEBSOCKET_MESSAGE_BYTES);

    sent.length = 0;
    port.fitMessagesToPeer(undefined);
    port.write([bytes]);
    expect(Math.max(...sent)).toBe(MAX_WEBSOCKET_MESSAGE_BYTES);
  });
});
