/**
 * The one logger shape every part of quorate accepts: a pino-compatible subset (pino, bunyan and
 * most structured loggers fit as they are). Every level is optional and the library is silent
 * without a logger; it never writes to the console itself.
 */
export interface Logger {
  /** Every AMQP frame in and out, one record each (the engine traces only when this level is on). */
  trace?(obj: unknown, msg?: string): void;
  /** Detail: attempts, attaches, replays, per-connection and per-process events. */
  debug?(obj: unknown, msg?: string): void;
  /** Lifecycle: connected, listening, a member started or stopped, failover done. */
  info?(obj: unknown, msg?: string): void;
  /** Something went wrong and is being handled: a lost connection, a refused client, a restart. */
  warn?(obj: unknown, msg?: string): void;
  /** Something failed for good: reconnection exhausted, storage or replication broken. */
  error?(obj: unknown, msg?: string): void;
  /**
   * pino's level check. Where present, the engine asks it once per connection whether `trace` is
   * on, so a logger whose `trace` is a no-op costs nothing per frame.
   */
  isLevelEnabled?(level: string): boolean;
}
