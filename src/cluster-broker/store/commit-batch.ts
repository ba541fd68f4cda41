/**
 * The event store's group commit buffer (file-event-store.ts): the records committed while a
 * write+fsync is in flight, framed back to back, and the one promise they all wait on.
 */
import { VarintWriter } from '../core/binary.js';

/**
 * The records of one group commit, framed back to back in one buffer as they are committed: each
 * event is encoded straight into it (no buffer per event, no copy at write time).
 */
export interface Batch {
  writer: VarintWriter;
  records: number;
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function newBatch(startBytes: number): Batch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers that do not wait (acquire, release) must not cause unhandled rejections.
  promise.catch(() => {});
  return { writer: new VarintWriter(startBytes), records: 0, promise, resolve, reject };
}

/**
 * A batch buffer's smallest first size. It starts at the previous batch's size (group commits under
 * a steady load are alike, often ~1 MiB) and doubles when records outgrow it...
 */
export const MIN_BATCH_BYTES = 64 * 1024;
/** ...and at most this, so one burst does not make every later batch allocate its size. */
export const MAX_BATCH_START_BYTES = 4 * 1024 * 1024;
