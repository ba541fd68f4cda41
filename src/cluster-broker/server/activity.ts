/**
 * What this server's clients did, counted on the hot path as plain integer increments (the HTTP
 * endpoints read them; nothing here allocates per message). Counts are this process's since it
 * started: in a cluster each member counts what its own clients did, so summing the members
 * gives the cluster's totals without double counting (the replicated state applies every event
 * on every member, which is why these counters live here and not in BrokerState).
 */

/** One queue's message counters (a link holds on to its queue's object). */
export interface QueueActivity {
  /** Enqueues committed through this member (duplicates excluded). */
  published: number;
  /** Messages sent to consumers (redeliveries included). */
  delivered: number;
}

export interface ActivityTotals {
  /** Enqueues committed (duplicates excluded). */
  published: number;
  /** Messages sent to consumers, redeliveries included. */
  delivered: number;
  /** Deliveries the consumer accepted. */
  acknowledged: number;
  /** Deliveries the consumer rejected (dead-lettered or dropped). */
  rejected: number;
  /** Deliveries of a message that had been acquired before (released, modified, or its consumer gone). */
  redelivered: number;
  /** Publishes recognised as duplicates by message-id and not enqueued again. */
  deduplicated: number;
}

export class Activity {
  readonly totals: ActivityTotals = {
    published: 0,
    delivered: 0,
    acknowledged: 0,
    rejected: 0,
    redelivered: 0,
    deduplicated: 0,
  };
  private readonly queues = new Map<string, QueueActivity>();

  /** The counters of `queue` (created on first use; kept for the process's life). */
  queue(name: string): QueueActivity {
    let q = this.queues.get(name);
    if (!q) {
      q = { published: 0, delivered: 0 };
      this.queues.set(name, q);
    }
    return q;
  }

  /** Counters of queues this member has seen traffic for. */
  queueEntries(): IterableIterator<[string, Readonly<QueueActivity>]> {
    return this.queues.entries();
  }
}
