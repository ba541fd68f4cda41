/**
 * The copy a link commits here (docs/federation.md#the-copy), built from the bytes the message
 * arrived as: its bare message (properties, application properties, body, footer: everything from
 * the first section after the message annotations on) passes through untouched, and only the two
 * sections a move changes are written anew in front of it:
 *
 * - the header, without delivery-count (a new enqueue here: its own count), with first-acquirer
 *   set: the copy is written in the form the queue stores a new message in (publisher-link.ts
 *   storedForm), so the enqueue keeps it as it is instead of rewriting the header into a second
 *   copy (docs/federation.md#stored-form);
 * - the message annotations, with the route extended (route.ts);
 *
 * and the delivery annotations are dropped (they are for one hop only). No decode and re-encode of
 * the body or the properties per moved message: a 1 KiB message costs one copy of its bytes. A
 * message that carries no annotations of its own (one never moved before) gets the same front
 * as the one before it when its header fields and origin are the same: written once, not per
 * message.
 */
import { readDescriptor } from '../../codec/composite-decode.js';
import { DELIVERY_ANNOTATIONS, HEADER, MESSAGE_ANNOTATIONS } from '../../codec/composites.js';
import { Decoder, decodeError } from '../../codec/decoder.js';
import { encodeMessage, type Message } from '../../codec/message.js';
import type { AmqpValue } from '../../codec/values.js';
import { withRoute } from './route.js';

/** One decoder for every copy (synchronous, never re-entered). */
const sections = new Decoder(new Uint8Array(0));

/**
 * Where the bare message begins in `encoded` (after header, delivery and message annotations),
 * `encoded.length` when it has none. Throws AmqpDecodeError on bytes that are not sections.
 */
export function bareMessageStart(encoded: Uint8Array): number {
  const d = sections.reset(encoded);
  while (d.pos < d.end) {
    const start = d.pos;
    if (d.u8() !== 0x00) throw decodeError(`message section at ${start} is not a described value`);
    const def = readDescriptor(d);
    if (def !== HEADER && def !== DELIVERY_ANNOTATIONS && def !== MESSAGE_ANNOTATIONS) return start;
    d.skip();
  }
  return d.end;
}

/** The front last written for a message with no annotations of its own, and what it depends on. */
interface PlainFront {
  from: string;
  durable: boolean | undefined;
  priority: number | undefined;
  ttl: number | undefined;
  bytes: Uint8Array;
}
let lastPlainFront: PlainFront | undefined;

/** Header (durable, priority, ttl; first-acquirer set, no delivery-count) and annotations, encoded. */
function encodeFront(m: Message, messageAnnotations: Record<string, AmqpValue>): Uint8Array {
  const head: Message = { firstAcquirer: true, messageAnnotations };
  if (m.durable !== undefined) head.durable = m.durable;
  if (m.priority !== undefined) head.priority = m.priority;
  if (m.ttl !== undefined) head.ttl = m.ttl;
  return encodeMessage(head);
}

/**
 * The front of a message that carries no message annotations (nearly every one that was never
 * moved before): the same bytes for every such message with the same header fields, so the last
 * one is kept and written once, not per message. Only read from (copied into each copy).
 */
function plainFront(m: Message, fromClusterId: string): Uint8Array {
  const last = lastPlainFront;
  if (
    last !== undefined &&
    last.from === fromClusterId &&
    last.durable === m.durable &&
    last.priority === m.priority &&
    last.ttl === m.ttl
  )
    return last.bytes;
  const bytes = encodeFront(m, withRoute(undefined, [], fromClusterId));
  lastPlainFront = { from: fromClusterId, durable: m.durable, priority: m.priority, ttl: m.ttl, bytes };
  return bytes;
}

/**
 * The encoded copy of `m` (decoded from `encoded`, its route `route`) moved from `fromClusterId`:
 * the new header and annotations (the route extended), then `encoded`'s bare message as it is.
 */
export function movedCopy(
  encoded: Uint8Array,
  m: Message,
  route: readonly string[],
  fromClusterId: string,
): Uint8Array {
  const bare = bareMessageStart(encoded);
  const front =
    m.messageAnnotations === undefined
      ? plainFront(m, fromClusterId)
      : encodeFront(m, withRoute(m.messageAnnotations, route, fromClusterId));
  const out = Buffer.allocUnsafe(front.length + encoded.length - bare);
  out.set(front, 0);
  out.set(encoded.subarray(bare), front.length);
  return out;
}
