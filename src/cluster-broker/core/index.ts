/** The broker core: a deterministic state machine over replicated broker events. */
export { BrokerState, type QueueInfo } from './broker-state.js';
export { decodeEvent, EVENT_CODEC_VERSION, EventDecodeError, encodeEvent } from './event-codec.js';
export {
  type AcquireEvent,
  type BrokerEvent,
  type BrokerEventType,
  DEFAULT_DEDUP_WINDOW_COUNT,
  DEFAULT_DEDUP_WINDOW_MS,
  type DeadLetterError,
  type DeclareQueueEvent,
  type DeleteQueueEvent,
  DLQ_SUFFIX,
  type EnqueueEvent,
  type ExpireEvent,
  type QueueOptions,
  type ReleaseAllEvent,
  type ReleaseConsumerEvent,
  type SettleEvent,
  type SettleOutcome,
} from './events.js';
export type * from './results.js';
