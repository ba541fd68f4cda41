/** The codec's internal API for the other layers (protocol/, client/, cluster-broker/). */

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
  decodeFrame,
  encodeAmqpFrame,
  encodeAmqpFrameParts,
  encodeHeartbeat,
  encodeProtocolHeader,
  encodeSaslFrame,
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
  type MessageId,
  type MessageProperties,
  peekMessage,
  splitMessage,
  withHeader,
} from './message.js';
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
