import { ByteWriter } from '../common/byte-writer.js';
import type { FastBuffer } from '../common/utf8-slice.js';

/**
 * The codec's byte writer: the common ByteWriter plus the nesting depth of the value being
 * written and the two moves only AMQP encoding needs (UTF-8 at a back-filled position, widening
 * a header). Module code reuses one scratch Writer (`scratch()`): encoding never re-enters itself.
 */
export class Writer extends ByteWriter {
  /** nesting depth of the value being written (capped like the decoder's, and against cycles) */
  depth = 0;

  /** writes UTF-8 (room must be ensured: 3 bytes per UTF-16 unit), returns the byte count */
  utf8At(s: string, at: number): number {
    return (this.buf as unknown as FastBuffer).utf8Write(s, at, this.buf.length - at);
  }

  /**
   * Move bytes [from, pos) forward by `by` bytes (used when an optimistic 8-bit header turns
   * out too small and must become a 32-bit one).
   */
  widen(from: number, by: number): void {
    this.ensure(by);
    this.buf.copyWithin(from + by, from, this.pos);
    this.pos += by;
  }
}

let shared = new Writer(64 * 1024);
/** the module-wide scratch writer, reset to position 0 */
export function scratch(): Writer {
  // a one-off huge message must not pin a huge scratch buffer forever
  if (shared.buf.length > 4 * 1024 * 1024) shared = new Writer(64 * 1024);
  shared.pos = 0;
  shared.depth = 0;
  return shared;
}
/** the scratch writer as the last `scratch()` call left it */
scratch.current = (): Writer => shared;
