/**
 * Compound framing shared by every list, map, array and performative encoder: the nesting depth
 * guard and the size/count header that starts in its 8-bit form and widens when it must.
 */
import { AmqpEncodeError } from '../errors.js';
import type { Writer } from './writer.js';

/** same cap as the decoder's: deeper values could not be decoded (and cyclic ones never end) */
const MAX_ENCODE_DEPTH = 64;

export function enter(w: Writer): void {
  if (++w.depth > MAX_ENCODE_DEPTH)
    throw new AmqpEncodeError(`value nested deeper than ${MAX_ENCODE_DEPTH} (or cyclic)`);
}

/**
 * Compound header: optimistic 8-bit form (code8, size, count), widened to the 32-bit form
 * (code8 + 0x10) when the contents outgrow it. Returns the header position for `endCompound`.
 */
export function beginCompound(w: Writer, code8: number): number {
  w.ensure(3);
  const at = w.pos;
  w.buf[at] = code8;
  w.pos = at + 3;
  return at;
}
export function endCompound(w: Writer, at: number, count: number): void {
  const size = w.pos - at - 2; // bytes after the size field, count byte included
  if (size <= 255 && count <= 255) {
    w.buf[at + 1] = size;
    w.buf[at + 2] = count;
    return;
  }
  w.widen(at + 3, 6);
  w.buf[at] += 0x10;
  w.view.setUint32(at + 1, size + 3);
  w.view.setUint32(at + 5, count);
}
