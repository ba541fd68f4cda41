/**
 * failover/: plain state and policy that survives a connection (no sockets, timers or clocks).
 * client/ drives it; see each module's header for how.
 */
export {
  AdmissionGate,
  type AdmissionLimits,
  type Grant,
  type Reservation,
  type ReserveResult,
} from './admission.js';
export { type CreditFlow, CreditWindow, type CreditWindowOptions } from './credit-window.js';
export { HeaderDeadline, type HeaderDeadlineOptions } from './header-deadline.js';
export {
  ensureMessageId,
  hasMessageId,
  type WithMessageId,
} from './message-id.js';
export {
  type DedupDuplicate,
  type FinalOutcome,
  ReceiverDedup,
  type ReceiverDedupOptions,
  receiverDedupKey,
} from './receiver-dedup.js';
export {
  type AdmitResult,
  type DeliveryPhase,
  type JournalEntry,
  type OnFull,
  ReplayJournal,
  type ReplayJournalOptions,
  type ReplayPlan,
} from './replay-journal.js';
export { mayFollowScheme, strongestScheme } from './scheme-policy.js';
export * from './server-address.js';
export { type PoolChange, ServerPool } from './server-pool.js';
export * from './server-pool-options.js';
export type { NextServer, ServerStats } from './server-rotation.js';
export { type SilenceVerdict, SilenceWatch, type SilenceWatchOptions } from './silence-watch.js';
