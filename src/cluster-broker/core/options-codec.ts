/** Binary layout of QueueOptions, shared by the event and snapshot codecs. */
import { ByteReaderError, type VarintReader, type VarintWriter } from './binary.js';
import type { LifetimePolicy, QueueOptions } from './events.js';

const HAS_MAX_MESSAGES = 1;
const HAS_MAX_BYTES = 2;
const HAS_DLQ = 4; // a string follows
const DLQ_NONE = 8; // deadLetterQueue: null
const HAS_DEDUP_COUNT = 16;
const HAS_DEDUP_MS = 32;
const TEMPORARY = 64; // owner string, policy u8
const MORE = 128; // a second flags byte follows (absent in stores written before topics)
const TOPIC = 1;
const SUBSCRIPTION = 2; // topic string, then a selector string when SELECTOR
const SELECTOR = 4;
const OWNER_USER = 8; // a string follows, after the subscription (absent in stores written before owners)
const DELIVERY_LIMIT = 16; // a uint follows, last (absent in stores written before delivery limits)
const POLICIES: readonly LifetimePolicy[] = [
  'delete-on-close',
  'delete-on-no-links',
  'delete-on-no-messages',
  'delete-on-no-links-or-messages',
];

export function writeQueueOptions(w: VarintWriter, o: QueueOptions): void {
  let flags = 0;
  if (o.maxMessages !== undefined) flags |= HAS_MAX_MESSAGES;
  if (o.maxBytes !== undefined) flags |= HAS_MAX_BYTES;
  if (typeof o.deadLetterQueue === 'string') flags |= HAS_DLQ;
  else if (o.deadLetterQueue === null) flags |= DLQ_NONE;
  if (o.dedupWindowCount !== undefined) flags |= HAS_DEDUP_COUNT;
  if (o.dedupWindowMs !== undefined) flags |= HAS_DEDUP_MS;
  if (o.temporary !== undefined) flags |= TEMPORARY;
  let more = 0;
  if (o.topic) more |= TOPIC;
  if (o.subscription !== undefined) {
    more |= SUBSCRIPTION;
    if (o.subscription.selector !== undefined) more |= SELECTOR;
  }
  if (o.ownerUser !== undefined) more |= OWNER_USER;
  if (o.deliveryLimit !== undefined) more |= DELIVERY_LIMIT;
  if (more !== 0) flags |= MORE;
  w.u8(flags);
  if (more !== 0) w.u8(more);
  if (o.maxMessages !== undefined) w.uint(o.maxMessages);
  if (o.maxBytes !== undefined) w.uint(o.maxBytes);
  if (typeof o.deadLetterQueue === 'string') w.str(o.deadLetterQueue);
  if (o.dedupWindowCount !== undefined) w.uint(o.dedupWindowCount);
  if (o.dedupWindowMs !== undefined) w.f64(o.dedupWindowMs);
  if (o.temporary !== undefined) {
    w.str(o.temporary.owner);
    w.u8(POLICIES.indexOf(o.temporary.policy));
  }
  if (o.subscription !== undefined) {
    w.str(o.subscription.topic);
    if (o.subscription.selector !== undefined) w.str(o.subscription.selector);
  }
  if (o.ownerUser !== undefined) w.str(o.ownerUser);
  if (o.deliveryLimit !== undefined) w.uint(o.deliveryLimit);
}

export function readQueueOptions(r: VarintReader): QueueOptions {
  const flags = r.u8();
  const more = flags & MORE ? r.u8() : 0;
  const o: QueueOptions = {};
  if (flags & HAS_MAX_MESSAGES) o.maxMessages = r.uint();
  if (flags & HAS_MAX_BYTES) o.maxBytes = r.uint();
  if (flags & HAS_DLQ) o.deadLetterQueue = r.str();
  else if (flags & DLQ_NONE) o.deadLetterQueue = null;
  if (flags & HAS_DEDUP_COUNT) o.dedupWindowCount = r.uint();
  if (flags & HAS_DEDUP_MS) o.dedupWindowMs = r.f64();
  if (flags & TEMPORARY) {
    const owner = r.str();
    const policy = POLICIES[r.u8()];
    if (policy === undefined) throw new ByteReaderError('unknown lifetime policy');
    o.temporary = { owner, policy };
  }
  if (more & TOPIC) o.topic = true;
  if (more & SUBSCRIPTION) {
    const topic = r.str();
    o.subscription = more & SELECTOR ? { topic, selector: r.str() } : { topic };
  }
  if (more & OWNER_USER) o.ownerUser = r.str();
  if (more & DELIVERY_LIMIT) o.deliveryLimit = r.uint();
  return o;
}
