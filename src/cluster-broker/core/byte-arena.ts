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
 *
 * A cluster member keeps no copy at all where it can (EntryViews, below): its messages arrive in
 * committed log entries that nothing rewrites, so a message is a place in the entry's buffer.
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

const EMPTY: Uint8Array = new Uint8Array(0);

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
function ownCopy(b: Uint8Array): StoredBytes {
  return { chunk: new Uint8Array(b), at: WHOLE_CHUNK };
}

/** A copy of `b` into `arena`'s chunks, or with its own buffer where there is no arena. */
export function storeCopy(b: Uint8Array, arena: ByteArena | undefined): StoredBytes {
  return arena ? arena.store(b) : ownCopy(b);
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

/**
 * The largest buffer a message kept as a view may pin once its neighbours are gone: two arena
 * chunks. A follower's socket reads (64 KiB), the framing copy of an append spanning two of them
 * (~65 KB at full speed) and the leader's entry chunks (64 KiB) are kept as views; a catch-up
 * append's framing copy (up to 1 MiB) is not, so a message left behind pins no more than
 * about what an arena chunk pins.
 */
export const MAX_PINNED_BYTES = 2 * CHUNK_BYTES;

/**
 * Messages kept as places in the buffers they were decoded from, without a copy (a cluster
 * member's committed entries: docs/cluster-member.md#one-copy). Only for bytes that nothing
 * writes into after they are kept and whose buffer is never reused (the caller's promise: see
 * ClusterStateMachine). A message in a buffer over MAX_PINNED_BYTES is copied into `arena` (or
 * one of its own) instead.
 */
export class EntryViews {
  /** The buffer of the last kept view, and a Uint8Array over all of it (one per buffer, not per message). */
  private buffer: ArrayBufferLike | undefined;
  private whole = EMPTY;

  keep(b: Uint8Array, arena: ByteArena | undefined): StoredBytes {
    const buffer = b.buffer;
    if (buffer.byteLength > MAX_PINNED_BYTES) return storeCopy(b, arena);
    if (b.length > MAX_PACKED_BYTES) return { chunk: b, at: WHOLE_CHUNK };
    if (buffer !== this.buffer) {
      this.buffer = buffer;
      this.whole = new Uint8Array(buffer);
    }
    return { chunk: this.whole, at: b.byteOffset * (LENGTH_MASK + 1) + b.length };
  }
}
