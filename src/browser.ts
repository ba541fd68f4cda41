/**
 * The browser build, `quorate/browser` (docs/websocket.md#browser): the same API as `quorate`, over
 * WebSocket only. The build swaps the Node transport for the page's `WebSocket`
 * (client/transport-browser.ts) and the few Node modules the client names for small stand-ins
 * (src/browser-shims/), and fails if any other Node module is imported.
 *
 * @module quorate/browser
 */
import type { Connection } from './client/api.js';
import { connectWithBounds, type MemoryBounds } from './client/connection.js';
import type { ConnectOptions } from './client/types.js';
import { ArgumentTypeError } from './errors.js';
import { isWebSocketScheme } from './wire-extensions.js';

// everything `quorate` exports; the local `connect` below takes the place of its `connect`
export * from './index.js';

/**
 * What a tab keeps at most by default (docs/websocket.md#browser-memory): 1,000 sends / 4 MiB
 * waiting for their outcome (the replay buffer), and each receiver's dedup window of 1,000
 * message-ids for 2 minutes. Options given to connect() / openReceiver() still win.
 */
export const BROWSER_MEMORY_BOUNDS: MemoryBounds = {
  bufferLimit: { messages: 1_000, bytes: 4 * 1024 * 1024 },
  dedup: { maxIds: 1_000, maxAgeMs: 120_000 },
};

function schemeOf(url: string): string {
  const colon = url.indexOf(':');
  return colon < 0 ? '' : url.slice(0, colon).toLowerCase();
}

/**
 * Connects like `quorate`'s connect(), over WebSocket only: every URL is `ws://` or `wss://`, and
 * `tls` / `dial` are refused (the browser owns TLS and sockets). Memory defaults are
 * {@link BROWSER_MEMORY_BOUNDS}.
 */
export function connect(options: ConnectOptions): Promise<Connection> {
  try {
    const urls = typeof options.urls === 'string' ? [options.urls] : options.urls;
    for (const url of urls)
      if (!isWebSocketScheme(schemeOf(url)))
        throw new ArgumentTypeError(
          'ERR_INVALID_ARG_VALUE',
          `quorate/browser connects over WebSocket only: ${schemeOf(url) || url} is not ws:// or wss://`,
        );
    for (const key of ['tls', 'dial'] as const)
      if (options[key] !== undefined)
        throw new ArgumentTypeError(
          'ERR_INVALID_ARG_VALUE',
          `quorate/browser takes no ${key} option: the browser opens the WebSocket and its TLS`,
        );
  } catch (err) {
    return Promise.reject(err);
  }
  return connectWithBounds(options, BROWSER_MEMORY_BOUNDS);
}
