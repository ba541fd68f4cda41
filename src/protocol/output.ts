/** Output helpers: how the engine's frames are handed to the adapter. */
import type { EncodedHead } from './codec-port.js';

/** Payloads at least this big are not copied into frame buffers or coalesced. */
export const COPY_LIMIT = 4096;

/** Merge consecutive buffers smaller than COPY_LIMIT into one; keep big ones as they are. */
export function coalesceSmall(chunks: Uint8Array[]): Uint8Array[] {
  const res: Uint8Array[] = [];
  let i = 0;
  while (i < chunks.length) {
    if (chunks[i].length >= COPY_LIMIT) {
      res.push(chunks[i++]);
      continue;
    }
    let j = i;
    let size = 0;
    while (j < chunks.length && chunks[j].length < COPY_LIMIT) size += chunks[j++].length;
    if (j - i === 1) {
      res.push(chunks[i]);
    } else {
      const buf = Buffer.allocUnsafe(size);
      let o = 0;
      for (let k = i; k < j; k++) {
        buf.set(chunks[k], o);
        o += chunks[k].length;
      }
      res.push(buf);
    }
    i = j;
  }
  return res;
}

/** Largest buffer small frames are copied into (one socket write takes many frames). */
const SLAB_SIZE = 64 * 1024;
const EMPTY_SLAB = Buffer.alloc(0);
/** Smallest one (below Node's pool limit: cut from its shared pool). */
const MIN_SLAB_SIZE = 1024;

/**
 * A connection's output between two takes: small frames are copied back to back into a shared
 * slab, so a batch of a thousand transfers is a few buffers, not a thousand (no allocation per
 * frame, no join before the socket write); a big payload stays its own buffer. Bytes handed out by
 * take() are never written again: the next frames go after them in the slab, or into a new one.
 * A slab is sized from the connection's batches (twice the last one or the one being
 * written, within [1 KiB, 64 KiB]) and dropped
 * at a take whose batch used little of it, so an idle connection keeps little memory.
 */
export class FrameOutput {
  private chunks: Uint8Array[] = [];
  private slab: Buffer = EMPTY_SLAB;
  /** Start of the bytes in the slab not handed out yet. */
  private start = 0;
  private pos = 0;
  /** Bytes of the last batch taken. */
  private lastBatch = 0;
  /** Bytes appended since the last take. */
  private batch = 0;

  get empty(): boolean {
    return this.chunks.length === 0 && this.pos === this.start;
  }

  /** Appends `head`'s bytes [0, pos) then `payload` (both copied; `head` may be a scratch writer). */
  copy(head: EncodedHead, payload?: Uint8Array): void {
    const headLength = head.pos;
    const need = headLength + (payload === undefined ? 0 : payload.length);
    if (this.slab.length - this.pos < need) {
      this.seal();
      const size = Math.min(SLAB_SIZE, Math.max(MIN_SLAB_SIZE, 2 * Math.max(this.lastBatch, this.batch)));
      this.slab = Buffer.allocUnsafe(Math.max(size, need));
      this.start = 0;
      this.pos = 0;
    }
    this.batch += need;
    const slab = this.slab;
    const buf = head.buf;
    let at = this.pos;
    // a frame head is a few dozen bytes: a loop beats a subarray + set
    for (let i = 0; i < headLength; i++) slab[at++] = buf[i]!;
    this.pos = at;
    if (payload !== undefined && payload.length > 0) {
      this.slab.set(payload, this.pos);
      this.pos += payload.length;
    }
  }

  /** Appends `b` as its own buffer (not copied). */
  push(b: Uint8Array): void {
    this.seal();
    this.batch += b.length;
    this.chunks.push(b);
  }

  /** Everything appended since the last take, in order. */
  take(): Uint8Array[] {
    this.seal();
    const out = this.chunks;
    this.chunks = [];
    const bytes = this.batch;
    this.lastBatch = bytes;
    this.batch = 0;
    if (this.slab.length > MIN_SLAB_SIZE && bytes * 8 < this.slab.length) {
      // a quiet connection: let the slab go (the next batch gets one its size)
      this.slab = EMPTY_SLAB;
      this.start = this.pos = 0;
    }
    return out;
  }

  private seal(): void {
    if (this.pos === this.start) return;
    this.chunks.push(this.slab.subarray(this.start, this.pos));
    this.start = this.pos;
  }
}
