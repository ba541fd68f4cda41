/** What a link handler needs from its connection. */
import type { ServerContext } from './context.js';
import type { TransactionRegistry } from './transactions.js';

export interface LinkHost {
  readonly ctx: ServerContext;
  /** The peer's container-id (from its Open). */
  readonly containerId: string;
  /** The SASL PLAIN user; undefined for ANONYMOUS or no SASL (docs/security.md#identity). */
  readonly user: string | undefined;
  /** Queues this connection auto-created (or is creating): attaching to new names, relaying to them. */
  queuesCreated: number;
  /** This connection's open local transactions. */
  readonly transactions: TransactionRegistry;
  /** Output was produced outside the connection's own event handling: write it soon. */
  scheduleFlush(): void;
  /**
   * A submit failed: the outcome of what it carried is unknown (or the backend is gone). Never
   * settle anything on it: close the connection with amqp:connection:forced.
   */
  fail(cause: unknown): void;
  /** A bug in our own continuation: log it and close this connection (amqp:internal-error), never the process. */
  internalError(err: unknown): void;
  /**
   * True while the socket holds more unsent output than the high-water mark: consumers stop
   * acquiring until `whenWritable` calls them back (memory stays bounded by a slow reader).
   */
  readonly congested: boolean;
  whenWritable(resume: () => void): void;
}

/** Every link handler, as the connection sees it. */
export interface LinkHandler {
  /** The link detached (either side) or its session/connection ended: release what it holds. */
  close(): void;
}
