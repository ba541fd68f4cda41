/** The sans-I/O AMQP 1.0 protocol engine (internal: used by client/ and cluster-broker/). */
export { Condition } from './conditions.js';
export { ProtocolConnection } from './connection.js';
export {
  ACCEPTED,
  IncomingDelivery,
  isTerminal,
  OutgoingDelivery,
  type OutgoingStatus,
  REJECTED,
  RELEASED,
} from './delivery.js';
export { DispositionBatcher, sameState } from './dispositions.js';
export {
  type DriverHooks,
  EngineDriver,
  type EngineOutput,
  type SocketEvents,
  SocketPort,
} from './engine-driver.js';
export { type ErrorScope, toAmqpError } from './errors.js';
export {
  type FilterEntry,
  filterEntries,
  isSelectorFilter,
  SELECTOR_FILTER,
  SELECTOR_FILTER_CODE,
  selectorFilter,
} from './filters.js';
export type { AcceptOptions, Link, LinkOptions, LinkState, RcvSettleMode, SndSettleMode } from './link.js';
export { ownedBytes, ReceiverLink } from './receiver.js';
export { SaslCode } from './sasl.js';
export { SenderLink, type SendOptions } from './sender.js';
export { Session, type SessionState } from './session.js';
export type {
  BeginOptions,
  ConnectionState,
  EngineEvent,
  EngineOptions,
  LocalOpenOptions,
  ProtocolLogger,
  Role,
  SaslAuthenticator,
  SaslClientOptions,
  SaslIdentity,
  SaslServerOptions,
} from './types.js';
// the binding's Node Duplex (websocket-stream.ts) is imported from its file: the barrel stays free
// of Node modules for the browser build (docs/websocket.md#browser)
export {
  MAX_WEBSOCKET_MESSAGE_BYTES,
  MIN_WEBSOCKET_MESSAGE_BYTES,
  type WebSocketLike,
  WebSocketStreamError,
  type WebSocketStreamOptions,
} from './websocket-binding.js';
export { WebSocketPort } from './websocket-port.js';
