/**
 * The one place the engine imports the codec from: if the codec's module layout changes, only
 * this file changes.
 */

export type {
  AmqpErrorBody,
  Attach,
  Begin,
  Close,
  Coordinator,
  DeliveryState,
  Detach,
  Disposition,
  End,
  Fields,
  Flow,
  Frame,
  Open,
  Performative,
  ProtocolId,
  SaslInit,
  SaslPerformative,
  Source,
  Target,
  Transfer,
} from '../codec/contract.js';
export {
  type DeliveryStart,
  type EncodedHead,
  encodeAmqpFrame,
  encodeAmqpFrameHead,
  encodeAmqpFrameParts,
  encodeHeartbeat,
  encodeProtocolHeader,
  encodeSaslFrame,
  encodeTransferHead,
  FrameReader,
  MIN_MAX_FRAME_SIZE,
} from '../codec/index.js';
