/**
 * Plain TCP reads without the Readable stream machinery: `net.connect({ onread })` reads straight
 * into a buffer we hand out, and the socket's 'data' listeners are called from its callback. Per
 * read that skips the stream's push, its buffering checks and the fresh ArrayBuffer each read
 * gets (docs/architecture.md#client-reads).
 *
 * The buffers are not reused: each read lands in the unused tail of a slab, and a full slab is
 * left to the views that still point into it. Every view the decoder keeps past the read (a
 * partial frame, a delivery tag, a payload handed out as a view) therefore stays intact, as it
 * does with the stream's own chunks. Payloads are handed out as views too (a kept message keeps
 * its slab), unless the receiver copies them (ReceiverOptions.copyBodies): a copy per message
 * doubled the ArrayBuffer bytes that bring V8's full collections on (docs/architecture.md#client-reads).
 */
import { Buffer } from 'node:buffer';

/** One slab: four reads' worth at the size a stream read takes (64 KiB). */
const SLAB_BYTES = 256 * 1024;
/** A read is never offered less room than this: a new slab starts once the tail is smaller. */
const MIN_READ_BYTES = 64 * 1024;

/**
 * The socket a read is handed to: its 'data' listeners run as for a stream read, with a second
 * argument, true when the read filled the room it was offered (more bytes are most likely
 * waiting and are read next, in the same turn of the event loop).
 */
interface DataEmitter {
  emit(event: 'data', chunk: Uint8Array, filled: boolean): boolean;
}

/** The `onread` option of `net.connect`, for the socket `target()` returns once it exists. */
export interface SlabReads {
  buffer: () => Uint8Array;
  /** true: keep reading (the socket is never paused here) */
  callback: (bytesRead: number, buffer: Uint8Array) => boolean;
}

export function slabReads(target: () => DataEmitter | undefined): SlabReads {
  let slab = Buffer.allocUnsafe(SLAB_BYTES);
  let used = 0;
  return {
    // Node asks for the next buffer after every read (and once before the first)
    buffer: () => {
      if (slab.length - used < MIN_READ_BYTES) {
        slab = Buffer.allocUnsafe(SLAB_BYTES);
        used = 0;
      }
      return slab.subarray(used);
    },
    callback: (bytesRead, buffer) => {
      used += bytesRead;
      target()?.emit('data', buffer.subarray(0, bytesRead), bytesRead === buffer.length);
      return true;
    },
  };
}
