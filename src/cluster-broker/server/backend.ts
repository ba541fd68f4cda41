/**
 * The broker's BACKEND: where the AMQP server sends broker events and learns their results.
 *
 * The server never touches a log or a store itself. A single node implements this over its
 * event store (local-backend.ts); a cluster member implements it over its replicated log:
 * `submit` proposes the event to the leader and resolves once the entry is committed on a
 * majority and applied locally; `available` fires when an applied entry (from any member) made
 * messages available; `serving` follows quorum.
 */
import type { EventEmitter } from 'eventemitter3';
import { AmqpError, type AmqpErrorOptions } from '../../errors.js';
import type { BrokerState } from '../core/broker-state.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';

/** What the backend tells the server, typed (eventemitter3 style). */
export interface BrokerBackendEvents {
  /** Messages may have become available in `queue` (enqueue, release, modified, dead-letter, restart). */
  available: (queue: string) => void;
  /** The backend started or stopped serving clients (cluster: quorum gained or lost). */
  serving: (serving: boolean, reason: string | undefined) => void;
  /**
   * Cluster: a receiver link with this key (`containerId/linkName`) attached on another member and
   * took over: detach the local one with amqp:link:stolen. A single node never emits it.
   */
  stolen: (linkKey: string) => void;
  /** Cluster: a link with this key (`containerId/linkName`) attached on another member (its claim applied). */
  claimed: (linkKey: string) => void;
}

/** What the AMQP server commits broker events through: a local store or a replicated log. */
export interface BrokerBackend {
  /**
   * Every committed event applied so far, in log order. Read-only for the server: it only runs
   * queries (hasQueue, queueInfo, listQueues...). Never call `apply` on it.
   */
  readonly state: BrokerState;
  /**
   * Commits `event` and resolves with what applying it did, once it is committed (single node:
   * written and fsynced, docs/delivery-contract.md#commit-point; cluster: on a majority) AND applied
   * to `state`. Rejects with OutcomeUnknownError when the event may or may not commit (lost
   * leadership after proposing, leader unreachable): the server then never settles the affected
   * deliveries and closes the connection with amqp:connection:forced. Rejects with another
   * AmqpError when the event surely did not commit.
   *
   * `leaderTime` is the proposer's clock (`now()`); a cluster leader may restamp it with its own
   * clock, shifting an enqueue's `expiresAt` by the same amount.
   *
   * Events submitted by one server commit in submission order (the server relies on it: a
   * consumer's release-consumer submitted before its acquire is applied before it).
   */
  submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>>;
  /** The clock events are stamped with (ms since the epoch). */
  now(): number;
  /**
   * The process proposing this server's events, as owner records name it (cluster:
   * `<member>@<incarnation>`); absent on a single node (docs/topics.md#owner-gone).
   */
  readonly origin?: string;
  /** False while the backend cannot serve clients (cluster: not quorate, catching up). */
  readonly serving: boolean;
  /** Why it is not serving (goes into the close description), when `serving` is false. */
  readonly notServingReason: string | undefined;
  /** Subscribe (an eventemitter3 EventEmitter<BrokerBackendEvents> provides both). */
  on: EventEmitter<BrokerBackendEvents>['on'];
  off: EventEmitter<BrokerBackendEvents>['off'];
}

/**
 * The fate of a submitted event cannot be known (it may still commit). Settling anything on it is
 * forbidden (docs/delivery-contract.md#unknown-outcome): the connection is closed with amqp:connection:forced.
 */
export class OutcomeUnknownError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:connection:forced', description, options);
    this.name = 'OutcomeUnknownError';
  }
}

/** The backend is closed or failed (disk error): nothing more commits. */
export class BackendClosedError extends AmqpError {
  constructor(description: string, options: AmqpErrorOptions = {}) {
    super('amqp:internal-error', description, options);
    this.name = 'BackendClosedError';
  }
}
