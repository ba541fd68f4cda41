/**
 * The client: `connect()` and what it returns, the errors, the message codec.
 *
 * @module quorate
 */
// The public client API and message codec: interfaces for what connect() returns, never the
// implementation classes (their internals stay out of the published declarations).

export type {
  Connection,
  ConnectionState,
  ConnectionStats,
  Delivery,
  LinkState,
  ReceivedMessage,
  Receiver,
  RemoteOpen,
  Sender,
} from './client/api.js';
export { connect } from './client/connection.js';
export {
  CHANNELS,
  type ChannelSource,
  type ConnectTraceContext,
  type FailoverMessage,
  type MembershipMessage,
  type ReceiveMessage,
  type ReconnectingMessage,
  type SendTraceContext,
  type SettleTraceContext,
} from './client/diagnostics.js';
export type {
  DeclareQueueOptions,
  Management,
  ManagementQueueInfo,
} from './client/management.js';
export { createRequester, type Requester, type RequesterOptions } from './client/request-reply.js';
export { SendError } from './client/send-error.js';
export type {
  CallOptions,
  ConnectionEvents,
  ConnectOptions,
  DialFunction,
  DialTarget,
  FailoverEvent,
  LinkEvents,
  Logger,
  ModifyOptions,
  Outcome,
  OutcomeError,
  ReceiveBatchOptions,
  ReceiverOptions,
  ReconnectOptions,
  RefusedOutcome,
  SenderOptions,
  SendOptions,
  SendResult,
  SettleMode,
  SettleOptions,
  SettleOutcome,
  Transaction,
  TransactionOptions,
} from './client/types.js';
export * from './codec/public.js';
export {
  type AmqpStandardCondition,
  type ArgumentErrorCode,
  ArgumentRangeError,
  ArgumentTypeError,
  type ClientCondition,
  ClientError,
  type ConnectionCondition,
  ConnectionError,
  type LinkCondition,
  LinkError,
  ManagementError,
  type SessionCondition,
  SessionError,
  type TransactionCondition,
  TransactionError,
} from './errors.js';
