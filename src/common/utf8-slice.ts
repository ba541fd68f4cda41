/**
 * UTF-8 text of a byte range, through Buffer's own `utf8Slice` (what toString() calls, without
 * its encoding lookup and argument checks; the browser build's Buffer stand-in has one too). Any
 * Uint8Array will do as `this`, so a reader of plain Uint8Arrays makes no Buffer view to decode.
 * Invalid sequences become U+FFFD.
 */

/** Node's Buffer methods behind toString()/write() (present since Node 0.x, not in @types/node) */
export interface FastBuffer {
  utf8Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
}

const slice = (Buffer.prototype as unknown as FastBuffer).utf8Slice;

export function utf8Slice(bytes: Uint8Array, start: number, end: number): string {
  return slice.call(bytes, start, end);
}
