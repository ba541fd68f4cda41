/**
 * Where encodeMessage's result lives when a data body makes it large: a slice of a shared slab
 * instead of a buffer of its own (docs/architecture.md#encode-output).
 *
 * A buffer of its own is one malloc per message; once the collector frees a batch of them at the
 * top of the heap, glibc gives those pages back to the kernel, and the next messages fault every
 * page in again (zeroed by the kernel). Carving results from a slab makes that one allocation per
 * slab. A live result keeps its whole slab alive, so only sizes between SLAB_MIN and SLAB_MAX are
 * carved: at most SLAB_SIZE / SLAB_MIN (32x) for a result held alone, as a buffer under 4 KiB
 * from Node's own pool keeps its 8 KiB slab.
 */

/** bytes of one slab */
export const SLAB_SIZE = 1024 * 1024;
/** smallest result carved from a slab (smaller ones use Node's own pool or a buffer of their own) */
export const SLAB_MIN = SLAB_SIZE / 32;
/** largest result carved from a slab (larger ones get a buffer of their own) */
export const SLAB_MAX = SLAB_SIZE / 8;

let slab: Buffer | undefined;
let offset = 0;

/** An uninitialised buffer of n bytes that the caller owns (it never hands out the same bytes twice). */
export function outputBuffer(n: number): Buffer {
  if (n < SLAB_MIN || n > SLAB_MAX) return Buffer.allocUnsafe(n);
  if (slab === undefined || offset + n > SLAB_SIZE) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    offset = 0;
  }
  const out = slab.subarray(offset, offset + n);
  // the next result starts 8-aligned, as Node's pool aligns its slices
  offset = (offset + n + 7) & ~7;
  return out;
}
