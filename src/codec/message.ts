/**
 * The message codec (part 3, 3.2): a Message with camelCase fields <-> the bare/annotated message
 * bytes (a sequence of described sections).
 */

import { AmqpEncodeError } from '../errors.js';
import { readCompositeBody, readDescriptor, readField } from './composite-decode.js';
import { hasAnyField, writeComposite, writeDescriptor, writeRestricted } from './composite-encode.js';
import {
  AMQP_SEQUENCE,
  AMQP_VALUE,
  APPLICATION_PROPERTIES,
  type CompositeDef,
  DATA,
  DELIVERY_ANNOTATIONS,
  FOOTER,
  HEADER,
  MESSAGE_ANNOTATIONS,
  PROPERTIES,
} from './composites.js';
import { Decoder, decodeError } from './decoder.js';
import { writeList } from './encode.js';
import type { MessageId } from './message-id.js';
import type { AmqpValue } from './values.js';
import { scratch } from './writer.js';

/** Every body the codec maps: an AMQP value, data sections, or sequence sections. */
export type MessageBody = AmqpValue | Uint8Array[] | AmqpValue[][];

/** a default limit for assembled messages (the engine enforces it; max-message-size may lower it) */
export const DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024;

/** The header section: delivery details brokers may change in transit. */
export interface MessageHeader {
  /** Keep the message across broker restarts. */
  durable?: boolean;
  /** Relative priority, 0-255 (AMQP default 4). */
  priority?: number;
  /** Time to live in ms, from when the broker received it. */
  ttl?: number;
  /** True if no earlier acquirer could have seen this message. */
  firstAcquirer?: boolean;
  /** How many earlier delivery attempts failed. */
  deliveryCount?: number;
}

/** The properties section: immutable facts about the message. */
export interface MessageProperties {
  /** The id that identifies this message: failover re-sends and duplicate detection rely on it. */
  messageId?: MessageId;
  /** The identity of the user that produced the message. */
  userId?: Uint8Array;
  /** The address the message is meant for. */
  to?: string;
  /** A summary, as in an e-mail subject. */
  subject?: string;
  /** Where replies should go. */
  replyTo?: string;
  /** The message-id of the message this one answers. */
  correlationId?: MessageId;
  /** MIME type of the body, for data bodies. */
  contentType?: string;
  /** Content encoding of the body (e.g. `gzip`). */
  contentEncoding?: string;
  /** When the message expires, absolute. */
  absoluteExpiryTime?: Date;
  /** When the message was created. */
  creationTime?: Date;
  /** The group the message belongs to. */
  groupId?: string;
  /** Its position in that group. */
  groupSequence?: number;
  /** The group replies should go to. */
  replyToGroupId?: string;
}

/**
 * An AMQP message. Header and properties fields are flat; annotation/footer keys are symbols on
 * the wire, application-properties keys strings. The decoder sets only fields present on the wire,
 * so `decodeMessage(encodeMessage(m))` deep-equals `m` for plain values.
 *
 * Body mapping: a `Uint8Array` body is one `data` section; `undefined` means no body section;
 * anything else (null included) is one `amqp-value` section. `bodyType` overrides this and is
 * emitted by the decoder only when the default mapping would not reproduce the sections:
 * - `'data'`: body is a Uint8Array (one data section) or Uint8Array[] (one section each);
 *   decoded for two or more data sections (body: Uint8Array[]).
 * - `'value'`: body is the amqp-value even if it is a Uint8Array; decoded for an amqp-value
 *   holding binary.
 * - `'sequence'`: body is AmqpValue[][], one amqp-sequence section per inner array; always decoded
 *   with this bodyType.
 * Decoded binary (data bodies included) are views into the input bytes, not copies.
 *
 * `Body` is a type-level promise only: `Message<Order>` says what the application puts in or
 * expects; nothing checks a decoded body against it.
 */
export interface Message<Body = MessageBody> extends MessageHeader, MessageProperties {
  /** Annotations for the next hop only (symbol keys). */
  deliveryAnnotations?: Record<string, AmqpValue>;
  /** Annotations that travel with the message (symbol keys). */
  messageAnnotations?: Record<string, AmqpValue>;
  /** The application's own headers (string keys), e.g. for routing or filtering. */
  applicationProperties?: Record<string, AmqpValue>;
  /** The payload; see the body mapping above. */
  body?: Body;
  /** Which body section(s) `body` is; see the body mapping above. */
  bodyType?: 'data' | 'value' | 'sequence';
  /** Trailing annotations, e.g. checksums (symbol keys). */
  footer?: Record<string, AmqpValue>;
}

type Obj = Record<string, unknown>;

/** Write all sections into the scratch writer except a single data body, which is returned. */
function writeSections(m: Message): { big?: Uint8Array; split: number } {
  const w = scratch();
  const o = m as unknown as Obj;
  if (hasAnyField(HEADER, o)) writeComposite(w, HEADER, o);
  if (m.deliveryAnnotations != null) writeRestricted(w, DELIVERY_ANNOTATIONS, m.deliveryAnnotations);
  if (m.messageAnnotations != null) writeRestricted(w, MESSAGE_ANNOTATIONS, m.messageAnnotations);
  if (hasAnyField(PROPERTIES, o)) writeComposite(w, PROPERTIES, o);
  if (m.applicationProperties != null) writeRestricted(w, APPLICATION_PROPERTIES, m.applicationProperties);

  // a single data body is copied once, straight into the result
  let big: Uint8Array | undefined;
  let split = 0;
  const body = m.body;
  const bodyType =
    m.bodyType ?? (body instanceof Uint8Array ? 'data' : body === undefined ? undefined : 'value');
  if (bodyType === 'data') {
    if (body instanceof Uint8Array) {
      writeDescriptor(w, DATA.code);
      w.ensure(5);
      if (body.length <= 255) {
        w.buf[w.pos++] = 0xa0;
        w.buf[w.pos++] = body.length;
      } else {
        w.buf[w.pos++] = 0xb0;
        w.view.setUint32(w.pos, body.length);
        w.pos += 4;
      }
      big = body;
      split = w.pos;
    } else if (Array.isArray(body)) {
      for (const part of body) {
        if (!(part instanceof Uint8Array))
          throw new AmqpEncodeError("bodyType 'data' needs Uint8Array parts");
        writeRestricted(w, DATA, part);
      }
    } else throw new AmqpEncodeError("bodyType 'data' needs a Uint8Array or Uint8Array[]");
  } else if (bodyType === 'value') {
    writeRestricted(w, AMQP_VALUE, body);
  } else if (bodyType === 'sequence') {
    if (!Array.isArray(body)) throw new AmqpEncodeError("bodyType 'sequence' needs an array of arrays");
    for (const seq of body) {
      if (!Array.isArray(seq)) throw new AmqpEncodeError("bodyType 'sequence' needs an array of arrays");
      writeDescriptor(w, AMQP_SEQUENCE.code);
      writeList(w, seq);
    }
  }
  if (m.footer != null) writeRestricted(w, FOOTER, m.footer);

  return big === undefined ? { split } : { big, split };
}

/** Encode a message into one buffer (a data body is copied exactly once, into the result). */
export function encodeMessage(m: Message): Uint8Array {
  const { big, split } = writeSections(m);
  const w = scratch.current();
  if (big === undefined) return w.copyOut();
  const out = Buffer.allocUnsafe(w.pos + big.length);
  w.buf.copy(out, 0, 0, split);
  out.set(big, split);
  w.buf.copy(out, split + big.length, split, w.pos);
  return out;
}

/**
 * Encode a message as parts whose concatenation is `encodeMessage(m)`, without copying a single
 * data body: [sections before the body, the body itself, sections after it (if any)].
 * For writev / cork+write of large messages; the body part is the caller's own Uint8Array.
 */
export function encodeMessageParts(m: Message): Uint8Array[] {
  const { big, split } = writeSections(m);
  const w = scratch.current();
  if (big === undefined) return [w.copyOut()];
  const head = Buffer.allocUnsafe(split);
  w.buf.copy(head, 0, 0, split);
  return split === w.pos ? [head, big] : [head, big, w.copyOut(split)];
}

function readSection(d: Decoder): CompositeDef {
  if (d.u8() !== 0x00) throw decodeError(`message section at ${d.pos - 1} is not a described value`);
  const def = readDescriptor(d);
  if (def === undefined || def.kind !== 'section') throw decodeError(`unknown message section at ${d.pos}`);
  return def;
}

function readMap(d: Decoder, def: CompositeDef): Record<string, AmqpValue> | undefined {
  return readField(d, 'fields', def) as Record<string, AmqpValue> | undefined;
}

/**
 * The one decoder messages are read with (decodeMessage, splitMessage, peekMessage are
 * synchronous and never call one another while reading): no decoder per message.
 */
const messageDecoder = new Decoder(new Uint8Array(0));

/**
 * Decodes one encoded message (its sections, as carried by transfers). Throws
 * {@link AmqpDecodeError} on malformed bytes. Binary values are views into `bytes`, not copies.
 */
export function decodeMessage(bytes: Uint8Array): Message {
  const d = messageDecoder.reset(bytes);
  const m: Message = {};
  const o = m as unknown as Obj;
  // the first data section is kept on its own: an array (and its backing store) only for a second
  let firstData: Uint8Array | undefined;
  let data: Uint8Array[] | undefined;
  let sequences: AmqpValue[][] | undefined;
  let value: AmqpValue | undefined;
  let hasValue = false;
  let last = -1;
  while (d.pos < d.end) {
    const def = readSection(d);
    if (def.code < last || (def.code === last && def.code !== DATA.code && def.code !== AMQP_SEQUENCE.code))
      throw decodeError(`message section ${def.name} out of order`);
    last = def.code;
    switch (def.code) {
      case 0x70:
        readCompositeBody(d, HEADER, o);
        break;
      case 0x71: {
        const v = readMap(d, def);
        if (v !== undefined) m.deliveryAnnotations = v;
        break;
      }
      case 0x72: {
        const v = readMap(d, def);
        if (v !== undefined) m.messageAnnotations = v;
        break;
      }
      case 0x73:
        readCompositeBody(d, PROPERTIES, o);
        break;
      case 0x74: {
        const v = readField(d, 'string-map', def) as Record<string, AmqpValue> | undefined;
        if (v !== undefined) m.applicationProperties = v;
        break;
      }
      case 0x75: {
        const v = readField(d, 'binary', def) as Uint8Array | undefined;
        if (v === undefined) throw decodeError('data section holds null');
        if (firstData === undefined) firstData = v;
        else if (data === undefined) data = [firstData, v];
        else data.push(v);
        break;
      }
      case 0x76: {
        const v = d.value();
        if (!Array.isArray(v)) throw decodeError('amqp-sequence section does not hold a list');
        if (sequences === undefined) sequences = [];
        sequences.push(v);
        break;
      }
      case 0x77:
        value = d.value();
        hasValue = true;
        break;
      case 0x78: {
        const v = readMap(d, def);
        if (v !== undefined) m.footer = v;
        break;
      }
    }
  }
  const kinds = (firstData ? 1 : 0) + (sequences ? 1 : 0) + (hasValue ? 1 : 0);
  if (kinds > 1) throw decodeError('message mixes body section kinds');
  if (data !== undefined) {
    m.body = data;
    m.bodyType = 'data';
  } else if (firstData !== undefined) {
    m.body = firstData;
  } else if (sequences !== undefined) {
    m.body = sequences;
    m.bodyType = 'sequence';
  } else if (hasValue) {
    m.body = value;
    if (value instanceof Uint8Array) m.bodyType = 'value';
  }
  return m;
}

/** the header of an encoded message and where the rest (annotations + bare message) begins */
export function splitMessage(bytes: Uint8Array): { header?: MessageHeader; headerEnd: number } {
  const d = messageDecoder.reset(bytes);
  if (d.end === 0) return { headerEnd: 0 };
  const def = readSection(d);
  if (def !== HEADER) return { headerEnd: 0 };
  const header = readCompositeBody(d, HEADER) as MessageHeader;
  return { header, headerEnd: d.pos };
}

/** the same encoded message with its header section replaced (none if `header` has no fields) */
export function withHeader(bytes: Uint8Array, header: MessageHeader | undefined): Uint8Array {
  const { headerEnd } = splitMessage(bytes);
  const w = scratch();
  if (header !== undefined && hasAnyField(HEADER, header as Obj)) writeComposite(w, HEADER, header as Obj);
  const head = w.pos;
  const rest = bytes.length - headerEnd;
  const out = Buffer.allocUnsafe(head + rest);
  w.buf.copy(out, 0, 0, head);
  out.set(bytes.subarray(headerEnd), head);
  return out;
}

/**
 * Header and properties of an encoded message without decoding annotations or the body
 * (annotations are skipped by their sizes). For the broker: ttl, delivery-count, message-id.
 */
export function peekMessage(bytes: Uint8Array): {
  header?: MessageHeader;
  properties?: MessageProperties;
  headerEnd: number;
} {
  const d = messageDecoder.reset(bytes);
  const out: { header?: MessageHeader; properties?: MessageProperties; headerEnd: number } = { headerEnd: 0 };
  while (d.pos < d.end) {
    const start = d.pos;
    const def = readSection(d);
    if (def === HEADER) {
      out.header = readCompositeBody(d, HEADER) as MessageHeader;
      out.headerEnd = d.pos;
    } else if (def === DELIVERY_ANNOTATIONS || def === MESSAGE_ANNOTATIONS) {
      d.skip();
    } else if (def === PROPERTIES) {
      out.properties = readCompositeBody(d, PROPERTIES) as MessageProperties;
      break;
    } else {
      d.pos = start;
      break;
    }
  }
  return out;
}
