/**
 * Public types of the client API: options, results and the typed event maps. Each group has its
 * own file (types-connect.ts, types-links.ts, types-outcomes.ts, types-events.ts); this one
 * names them all, so the client and src/index.ts import them from one place.
 */
export type { Logger } from '../common/logger.js';
export type {
  CallOptions,
  ConnectOptions,
  DialFunction,
  DialTarget,
  ReconnectOptions,
} from './types-connect.js';
export type { ConnectionEvents, FailoverEvent, LinkEvents } from './types-events.js';
export type {
  ReceiveBatchOptions,
  ReceiverOptions,
  SenderOptions,
  SendOptions,
  SettleMode,
  SettleOptions,
  Transaction,
  TransactionOptions,
} from './types-links.js';
export type {
  ModifyOptions,
  Outcome,
  OutcomeError,
  RefusedOutcome,
  SendResult,
  SettleOutcome,
} from './types-outcomes.js';
