/**
 * The codec's internal API for the other layers (protocol/, client/, cluster-broker/).
 *
 * - Values: `encodeValue` / `decodeValue` in the value model of values.ts, `Typed` + helpers.
 * - Composites: field tables in composites.ts, one generic encoder (composite-encode.ts) and decoder (composite-decode.ts);
 *   `encodeComposite(name, body)` / `decodeComposite(bytes)` for any of them by spec name.
 * - Frames: `encodeAmqpFrame(channel, p, payload?)` returns one buffer and copies the payload
 *   once; `encodeAmqpFrameParts` returns [header + performative, payload] without copying it
 *   (for writev / cork+write); `encodeAmqpFrameHead` returns the header + performative as a
 *   scratch view for a caller that copies it into its own buffer. `FrameReader` decodes incrementally, zero-copy when a frame lies in
 *   one chunk.
 * - Messages: `encodeMessage` (a single data body is copied once), `encodeMessageParts`
 *   (not copied), `decodeMessage` (binary as views), and for the broker `splitMessage`,
 *   `withHeader` (rewrite only the header section) and `peekMessage` (header + properties
 *   without decoding annotations or body).
 * - Errors: decoding throws only AmqpDecodeError; encoding invalid values throws AmqpEncodeError.
 * Encoders write into one module-wide scratch buffer (no per-field allocations) and return an
 * exact-size copy; they are synchronous and never re-enter, so the reuse is safe.
 */

export { AmqpDecodeError, AmqpEncodeError, AmqpError } from '../errors.js';
export {
  BY_CODE,
  BY_NAME,
  COMPOSITES,
  type CompositeDef,
  type FieldDef,
  type FieldType,
} from './composites.js';
export * from './contract.js';
export { FrameReader, type FrameReaderOptions, type ProtocolHeaderFrame } from './frame-reader.js';
export {
  DEFAULT_MAX_FRAME_SIZE,
  type DeliveryStart,
  decodeFrame,
  type EncodedHead,
  encodeAmqpFrame,
  encodeAmqpFrameHead,
  encodeAmqpFrameParts,
  encodeHeartbeat,
  encodeProtocolHeader,
  encodeSaslFrame,
  encodeTransferHead,
  MIN_MAX_FRAME_SIZE,
  type ProtocolHeader,
  parseProtocolHeader,
} from './frames.js';
export {
  DEFAULT_MAX_MESSAGE_SIZE,
  decodeMessage,
  encodeMessage,
  encodeMessageParts,
  type Message,
  type MessageHeader,
  type MessageProperties,
  peekMessage,
  splitMessage,
  withHeader,
} from './message.js';
export { type MessageId, messageIdKey } from './message-id.js';
export * from './typed.js';
export {
  decodeComposite,
  decodeDeliveryState,
  decodeValue,
  encodeComposite,
  encodeDeliveryState,
  encodeValue,
} from './value.js';
export type { AmqpTypeName, AmqpValue, TypedValue } from './values.js';
