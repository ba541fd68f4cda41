// The public message codec: what `quorate` exports from its root.
export { AmqpDecodeError, AmqpEncodeError, AmqpError } from '../errors.js';
export {
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageBody,
  type MessageHeader,
  type MessageProperties,
} from './message.js';
export type { MessageId } from './message-id.js';
export {
  array,
  binary,
  boolean,
  byte,
  char,
  decimal32,
  decimal64,
  decimal128,
  described,
  double,
  float,
  int,
  isTyped,
  list,
  long,
  map,
  short,
  string,
  symbol,
  Typed,
  timestamp,
  ubyte,
  uint,
  ulong,
  ushort,
  uuid,
} from './typed.js';
export type { AmqpTypeName, AmqpValue, TypedValue } from './values.js';
