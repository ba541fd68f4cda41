/** Binary layout of QueueOptions, shared by the event and snapshot codecs. */
import type { ByteReader, ByteWriter } from './binary.js';
import type { QueueOptions } from './events.js';

const HAS_MAX_MESSAGES = 1;
const HAS_MAX_BYTES = 2;
const HAS_DLQ = 4; // a string follows
const DLQ_NONE = 8; // deadLetterQueue: null
const HAS_DEDUP_COUNT = 16;
const HAS_DEDUP_MS = 32;

export function writeQueueOptions(w: ByteWriter, o: QueueOptions): void {
  let flags = 0;
  if (o.maxMessages !== undefined) flags |= HAS_MAX_MESSAGES;
  if (o.maxBytes !== undefined) flags |= HAS_MAX_BYTES;
  if (typeof o.deadLetterQueue === 'string') flags |= HAS_DLQ;
  else if (o.deadLetterQueue === null) flags |= DLQ_NONE;
  if (o.dedupWindowCount !== undefined) flags |= HAS_DEDUP_COUNT;
  if (o.dedupWindowMs !== undefined) flags |= HAS_DEDUP_MS;
  w.u8(flags);
  if (o.maxMessages !== undefined) w.uint(o.maxMessages);
  if (o.maxBytes !== undefined) w.uint(o.maxBytes);
  if (typeof o.deadLetterQueue === 'string') w.str(o.deadLetterQueue);
  if (o.dedupWindowCount !== undefined) w.uint(o.dedupWindowCount);
  if (o.dedupWindowMs !== undefined) w.f64(o.dedupWindowMs);
}

export function readQueueOptions(r: ByteReader): QueueOptions {
  const flags = r.u8();
  const o: QueueOptions = {};
  if (flags & HAS_MAX_MESSAGES) o.maxMessages = r.uint();
  if (flags & HAS_MAX_BYTES) o.maxBytes = r.uint();
  if (flags & HAS_DLQ) o.deadLetterQueue = r.str();
  else if (flags & DLQ_NONE) o.deadLetterQueue = null;
  if (flags & HAS_DEDUP_COUNT) o.dedupWindowCount = r.uint();
  if (flags & HAS_DEDUP_MS) o.dedupWindowMs = r.f64();
  return o;
}
