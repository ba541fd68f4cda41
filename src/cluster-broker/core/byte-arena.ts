/**
 * Where queued messages' bytes are kept. A message's own ArrayBuffer and Uint8Array cost about
 * 180 B of heap on top of its bytes (Node 20, no pointer compression): for a 1 KiB message that
 * alone broke the memory target (docs/architecture.md#message-memory). So messages up to
 * MAX_PACKED_BYTES are copied back to back into chunks a queue shares between its messages, and a
 * message records its chunk and a packed offset/length; larger ones get an exact copy of their own.
 *
 * A chunk is freed when the last message in it is gone. A queue fills its chunks in log order and
 * is consumed mostly in that order, so chunks free in turn; a message left behind among consumed
 * neighbours (unsettled, or skipped by every consumer's selector) keeps its chunk, at most
 * CHUNK_BYTES, alive. Dead-lettering copies the bytes into the dead-letter queue's own chunks so a
 * long-lived DLQ never pins its source queue's chunks.
 */

/** Largest chunk; a queue's first chunks are smaller, so a queue holding little costs little. */
export const CHUNK_BYTES = 64 * 1024;
const FIRST_CHUNK_BYTES = 2048;
/** Messages up to this size are packed into chunks (the length fits LENGTH_BITS). */
export const MAX_PACKED_BYTES = 4096;
const LENGTH_BITS = 13;
const LENGTH_MASK = (1 << LENGTH_BITS) - 1;
/** `at` of a message that owns its whole chunk. */
export const WHOLE_CHUNK = -1;

const EMPTY = new Uint8Array(0);

/** A message's bytes: `chunk`, and where in it (offset << LENGTH_BITS | length, or WHOLE_CHUNK). */
export interface StoredBytes {
  readonly chunk: Uint8Array;
  readonly at: number;
}

/** The bytes a StoredBytes names, as a view (no copy). */
export function viewOf(s: StoredBytes): Uint8Array {
  if (s.at === WHOLE_CHUNK) return s.chunk;
  const offset = Math.floor(s.at / (LENGTH_MASK + 1));
  return s.chunk.subarray(offset, offset + (s.at & LENGTH_MASK));
}

/** The byte length a StoredBytes names (without making a view). */
export function sizeOf(s: StoredBytes): number {
  return s.at === WHOLE_CHUNK ? s.chunk.length : s.at & LENGTH_MASK;
}

/** An exact copy with its own ArrayBuffer (never a view pinning a larger receive buffer). */
export function ownCopy(b: Uint8Array): StoredBytes {
  return { chunk: new Uint8Array(b), at: WHOLE_CHUNK };
}

/** One queue's chunks: copies messages in, back to back. */
export class ByteArena {
  private chunk = EMPTY;
  private used = 0;
  private nextSize = FIRST_CHUNK_BYTES;

  /** Copies `b` in (the caller's buffer is not kept). */
  store(b: Uint8Array): StoredBytes {
    const n = b.length;
    if (n > MAX_PACKED_BYTES) return ownCopy(b);
    if (this.used + n > this.chunk.length) {
      const size = Math.max(n, this.nextSize);
      this.chunk = new Uint8Array(size);
      this.used = 0;
      this.nextSize = Math.min(CHUNK_BYTES, size * 2);
    }
    const offset = this.used;
    this.chunk.set(b, offset);
    this.used += n;
    return { chunk: this.chunk, at: offset * (LENGTH_MASK + 1) + n };
  }

  /** Forgets the chunk being filled (its queue is empty): a queue that drains holds nothing. */
  reset(): void {
    this.chunk = EMPTY;
    this.used = 0;
    this.nextSize = FIRST_CHUNK_BYTES;
  }
}
