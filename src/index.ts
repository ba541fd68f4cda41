// The public client API and message codec.

export { Connection, type ConnectionState, connect } from './client/connection.js';
export { Delivery } from './client/delivery.js';
export { Receiver } from './client/receiver.js';
export { Sender } from './client/sender.js';
export type {
  CallOptions,
  ConnectionEvents,
  ConnectOptions,
  FailoverEvent,
  LinkEvents,
  Logger,
  ModifyOptions,
  Outcome,
  OutcomeError,
  ReceiverOptions,
  ReconnectOptions,
  SenderOptions,
  SendOptions,
  SendResult,
  SettleMode,
} from './client/types.js';
export * from './codec/public.js';
export { ClientError, ConnectionError, LinkError, SendError, SessionError } from './errors.js';
