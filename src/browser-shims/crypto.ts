/**
 * `node:crypto` in the browser build (docs/websocket.md#browser): the two functions the client
 * uses, over the page's `globalThis.crypto`. `randomUUID` needs a secure context (https, or
 * localhost); elsewhere a version-4 UUID is made from `getRandomValues`, available everywhere.
 * `createHash('sha256')` keys long message-ids (codec/message-id.ts) and must stay synchronous,
 * which WebCrypto's digest is not: sha256.ts computes it.
 */
import { sha256 } from './sha256.js';

interface PageCrypto {
  randomUUID?: () => string;
  getRandomValues<T extends Uint8Array>(array: T): T;
}

const pageCrypto = (): PageCrypto => (globalThis as unknown as { crypto: PageCrypto }).crypto;

/** A random (version 4) UUID. */
export function randomUUID(): string {
  const c = pageCrypto();
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `createHash('sha256')`, the only algorithm the client asks for: update(), then digest('hex'). */
export function createHash(algorithm: 'sha256') {
  if (algorithm !== 'sha256')
    throw new Error(`only sha256 is available in the browser build, not ${algorithm}`);
  const parts: Uint8Array[] = [];
  const hash = {
    update(data: string | Uint8Array) {
      parts.push(typeof data === 'string' ? new TextEncoder().encode(data) : data);
      return hash;
    },
    digest(_encoding: 'hex'): string {
      let total = 0;
      for (const p of parts) total += p.length;
      const all = new Uint8Array(total);
      let at = 0;
      for (const p of parts) {
        all.set(p, at);
        at += p.length;
      }
      return Array.from(sha256(all), (x) => x.toString(16).padStart(2, '0')).join('');
    },
  };
  return hash;
}
