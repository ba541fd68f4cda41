/**
 * Frame encoding and frame-body decoding (part 2, 2.3). A frame is written into the scratch
 * writer with its size back-filled; the result is one exact-size buffer.
 *
 * Transfers: `encodeAmqpFrame(ch, transfer, payload)` copies the payload exactly once (into the
 * result). `encodeAmqpFrameParts` copies it zero times: it returns [header+performative, payload]
 * for writev / cork+write.
 */
import { AmqpDecodeError } from '../errors.js';
import { readCompositeBody, readDescriptor } from './composite-decode.js';
import { writeComposite, writeDescriptor } from './composite-encode.js';
import { BY_NAME, type CompositeDef, TRANSFER } from './composites.js';
import type {
  DeliveryState,
  Frame,
  Performative,
  ProtocolId,
  SaslPerformative,
  Transfer,
} from './contract.js';
import { Decoder, decodeError } from './decoder.js';
import { beginCompound, endCompound, writeBinary, writeUint } from './encode.js';
import { scratch, type Writer } from './writer.js';

export const FRAME_TYPE_AMQP = 0x00;
export const FRAME_TYPE_SASL = 0x01;
/** MIN-MAX-FRAME-SIZE: the limit before Open is exchanged */
export const MIN_MAX_FRAME_SIZE = 512;
/** The max-frame-size both our client and our broker declare in Open unless told otherwise: 1 MiB. */
export const DEFAULT_MAX_FRAME_SIZE = 1024 * 1024;

export function framingError(description: string): AmqpDecodeError {
  return new AmqpDecodeError('amqp:connection:framing-error', description);
}

function defOf(type: string, kind: 'performative' | 'sasl'): CompositeDef {
  const def = BY_NAME.get(type);
  if (def === undefined || def.kind !== kind) throw decodeError(`not a ${kind}: ${type}`);
  return def;
}

function writeFrameHeader(w: Writer, type: number, channel: number): void {
  w.ensure(8);
  const b = w.buf;
  b[4] = 2;
  b[5] = type;
  b[6] = channel >>> 8;
  b[7] = channel & 0xff;
  w.pos = 8;
}

function writeAmqp(channel: number, p: Performative): Writer {
  const w = scratch();
  writeFrameHeader(w, FRAME_TYPE_AMQP, channel);
  writeComposite(w, defOf(p.type, 'performative'), p.body as unknown as Record<string, unknown>);
  return w;
}

/** one AMQP frame: header, performative, then the payload (copied once) */
export function encodeAmqpFrame(channel: number, p: Performative, payload?: Uint8Array): Uint8Array {
  const w = writeAmqp(channel, p);
  const head = w.pos;
  const size = head + (payload === undefined ? 0 : payload.length);
  w.view.setUint32(0, size);
  if (payload === undefined || payload.length === 0) return w.copyOut();
  const out = Buffer.allocUnsafe(size);
  w.buf.copy(out, 0, 0, head);
  out.set(payload, head);
  return out;
}

/** Bytes [0, pos) of `buf`: what encodeAmqpFrameHead wrote. */
export interface EncodedHead {
  readonly buf: Uint8Array;
  readonly pos: number;
}

/**
 * One AMQP frame's header and performative, sized for `payloadLength` bytes to follow, left in
 * the scratch writer (valid until the next encode): for a caller that copies it into its own
 * output buffer, so a frame costs no allocation of its own.
 */
export function encodeAmqpFrameHead(channel: number, p: Performative, payloadLength: number): EncodedHead {
  const w = writeAmqp(channel, p);
  w.view.setUint32(0, w.pos + payloadLength);
  return w;
}

/** The transfer performative's descriptor code (amqp:transfer:list). */
const TRANSFER_CODE = 0x14;

/** What a delivery's first transfer says of it (the engine's outgoing delivery has these fields). */
export interface DeliveryStart {
  /** The delivery-id. */
  readonly id: number;
  /** The delivery-tag. */
  readonly tag: Uint8Array;
  /** The message-format. */
  readonly messageFormat: number;
  /** Sent settled. */
  readonly presettled: boolean;
}

/**
 * The head of a transfer on link `handle` that starts delivery `d`, with no delivery state: the
 * same bytes as encodeAmqpFrameHead(channel, { type: 'transfer', body: { handle, deliveryId: d.id,
 * deliveryTag: d.tag, messageFormat: d.messageFormat, settled: d.presettled || undefined, more:
 * more || undefined } }, payloadLength), written field by field (no performative object, no field
 * table walked per delivery). Left in the scratch writer like encodeAmqpFrameHead's.
 */
export function encodeTransferHead(
  channel: number,
  handle: number,
  d: DeliveryStart,
  more: boolean,
  payloadLength: number,
): EncodedHead {
  const w = scratch();
  writeFrameHeader(w, FRAME_TYPE_AMQP, channel);
  writeDescriptor(w, TRANSFER_CODE);
  const at = beginCompound(w, 0xc0);
  writeUint(w, handle);
  writeUint(w, d.id);
  writeBinary(w, d.tag);
  writeUint(w, d.messageFormat);
  let count = 4;
  if (d.presettled || more) {
    w.u8(d.presettled ? 0x41 : 0x40); // settled, or null before `more`
    count = 5;
    if (more) {
      w.u8(0x41);
      count = 6;
    }
  }
  endCompound(w, at, count);
  w.view.setUint32(0, w.pos + payloadLength);
  return w;
}

/** one AMQP frame as [header + performative, payload]: the payload is not copied (for writev) */
export function encodeAmqpFrameParts(
  channel: number,
  p: Performative,
  payload: Uint8Array,
): [Uint8Array, Uint8Array] {
  const w = writeAmqp(channel, p);
  w.view.setUint32(0, w.pos + payload.length);
  return [w.copyOut(), payload];
}

export function encodeSaslFrame(p: SaslPerformative): Uint8Array {
  const w = scratch();
  writeFrameHeader(w, FRAME_TYPE_SASL, 0);
  writeComposite(w, defOf(p.type, 'sasl'), p.body as unknown as Record<string, unknown>);
  w.view.setUint32(0, w.pos);
  return w.copyOut();
}

const HEARTBEAT = [0, 0, 0, 8, 2, 0, 0, 0];
/** an empty AMQP frame (channel 0) */
export function encodeHeartbeat(): Uint8Array {
  return Uint8Array.from(HEARTBEAT);
}

export function encodeProtocolHeader(id: ProtocolId): Uint8Array {
  return Uint8Array.of(0x41, 0x4d, 0x51, 0x50, id, 1, 0, 0);
}

export interface ProtocolHeader {
  id: ProtocolId;
  major: number;
  minor: number;
  revision: number;
}

/**
 * Parse the 8-byte protocol header. Throws AmqpDecodeError (framing-error) unless it starts with
 * "AMQP" and has id 0, 2 or 3; the version is returned, not checked (the engine answers an
 * unsupported version with its own header).
 */
export function parseProtocolHeader(b: Uint8Array): ProtocolHeader {
  if (b.length < 8) throw framingError(`protocol header needs 8 bytes, got ${b.length}`);
  if (b[0] !== 0x41 || b[1] !== 0x4d || b[2] !== 0x51 || b[3] !== 0x50)
    throw new AmqpDecodeError('amqp:connection:framing-error', 'not an AMQP protocol header', {
      info: { bytes: Array.from(b.subarray(0, 8)) },
    });
  const id = b[4];
  if (id !== 0 && id !== 2 && id !== 3) throw framingError(`unknown protocol id ${id}`);
  return { id, major: b[5], minor: b[6], revision: b[7] };
}

/**
 * The one decoder frames are read with (decoding is synchronous and never re-enters
 * decodeFrame, so one is enough): no decoder object per frame. It keeps a reference to the last
 * frame's bytes until the next frame, at most one read buffer.
 */
const frameDecoder = new Decoder(new Uint8Array(0));

/**
 * A transfer's fields, all of them present (undefined when the frame leaves them out), in one
 * order: a body read into it always has the same shape, whatever fields a peer sends.
 */
class TransferFields implements Transfer {
  handle = 0;
  deliveryId: number | undefined = undefined;
  deliveryTag: Uint8Array | undefined = undefined;
  messageFormat: number | undefined = undefined;
  settled: boolean | undefined = undefined;
  more: boolean | undefined = undefined;
  rcvSettleMode: number | undefined = undefined;
  state: DeliveryState | undefined = undefined;
  resume: boolean | undefined = undefined;
  aborted: boolean | undefined = undefined;
  batchable: boolean | undefined = undefined;

  /** Forget the last frame's fields (the decoder sets only those a frame carries). */
  clear(): void {
    this.handle = 0;
    this.deliveryId = undefined;
    this.deliveryTag = undefined;
    this.messageFormat = undefined;
    this.settled = undefined;
    this.more = undefined;
    this.rcvSettleMode = undefined;
    this.state = undefined;
    this.resume = undefined;
    this.aborted = undefined;
    this.batchable = undefined;
  }
}

/**
 * @internal One transfer frame object that decodeFrame fills again for every transfer it reads
 * with it: the frame, its performative and the transfer body are the same three objects each
 * time, so a received message costs none of them (~190 bytes of garbage). For a reader whose
 * caller is done with a frame before it asks for the next (the engine; FrameReaderOptions
 * reuseTransferFrames). The payload is a new view per frame, as always (it is kept).
 */
export class ReusedTransferFrame {
  readonly kind = 'amqp';
  channel = 0;
  readonly performative: { readonly type: 'transfer'; readonly body: TransferFields } = {
    type: 'transfer',
    body: new TransferFields(),
  };
  payload: Uint8Array | undefined = undefined;
}

/**
 * decode a performative from bytes [start, end) with frameDecoder, whose `pos` ends after it; a
 * transfer goes into `reuse` when given
 */
function readPerformative(
  bytes: Uint8Array,
  start: number,
  end: number,
  kind: 'performative' | 'sasl',
  reuse?: ReusedTransferFrame,
): Performative | SaslPerformative {
  const d = frameDecoder.reset(bytes, start, end);
  if (d.u8() !== 0x00) throw decodeError(`frame body is not a described ${kind}`);
  const def = readDescriptor(d);
  if (def === undefined || def.kind !== kind)
    throw decodeError(`frame body: unknown or unexpected ${kind} descriptor`);
  if (def === TRANSFER && reuse !== undefined) {
    const p = reuse.performative;
    p.body.clear();
    readCompositeBody(d, def, p.body as unknown as Record<string, unknown>);
    return p;
  }
  const body = readCompositeBody(d, def);
  return { type: def.name, body } as unknown as Performative;
}

/**
 * Decode one whole frame held in bytes [start, start + size) (size already validated against
 * the max frame size). Payload views point into `bytes`. With `reuse` (@internal), a transfer is
 * returned as that object, filled anew (ReusedTransferFrame).
 */
export function decodeFrame(
  bytes: Uint8Array,
  start: number,
  size: number,
  reuse?: ReusedTransferFrame,
): Frame {
  if (size < 8) throw framingError(`frame size ${size} < 8`);
  const doff = bytes[start + 4];
  if (doff < 2) throw framingError(`frame data offset ${doff} < 2`);
  if (size < doff * 4) throw framingError(`frame size ${size} < data offset ${doff * 4}`);
  const type = bytes[start + 5];
  const bodyStart = start + doff * 4;
  const end = start + size;
  if (type === FRAME_TYPE_AMQP) {
    const channel = (bytes[start + 6] << 8) | bytes[start + 7];
    if (bodyStart === end) return { kind: 'heartbeat', channel };
    const performative = readPerformative(bytes, bodyStart, end, 'performative', reuse) as Performative;
    if (performative.type === 'transfer') {
      const at = frameDecoder.pos;
      // a Buffer view, not a plain Uint8Array: decodeMessage's Decoder then reads it as it is
      // instead of wrapping it in one more view (~95 bytes of garbage per received message)
      const payload = Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at);
      if (reuse === undefined) return { kind: 'amqp', channel, performative, payload };
      reuse.channel = channel;
      reuse.payload = payload;
      return reuse as Frame;
    }
    return { kind: 'amqp', channel, performative };
  }
  if (type === FRAME_TYPE_SASL) {
    if (bodyStart === end) throw framingError('empty SASL frame');
    const performative = readPerformative(bytes, bodyStart, end, 'sasl') as SaslPerformative;
    if (frameDecoder.pos !== end) throw decodeError('SASL frame has bytes after its performative');
    return { kind: 'sasl', performative };
  }
  throw framingError(`unknown frame type ${type}`);
}
