/**
 * Public types of links and the calls on them: sender and receiver options, a send's and a
 * settlement's options, the transaction handle, the settle mode in force. Re-exported by types.ts.
 */
import type { CallOptions } from './types-connect.js';

/**
 * A local transaction, handed to the function of {@link Connection.transaction}. Pass it as
 * `{ tx }` to `sender.send()` and to a Delivery's settlement calls; it belongs to the connection
 * that made it and ends when that function does.
 */
export interface Transaction {
  /** The txn-id the broker's coordinator assigned. */
  readonly id: Uint8Array;
}

/** Options of one send(): its deadline and cancellation, and the transaction it belongs to. */
export interface SendOptions extends CallOptions {
  /**
   * Send inside this transaction (from {@link Connection.transaction}): the message becomes
   * visible when the transaction commits and is dropped if it rolls back. Such a send is never
   * re-sent by failover: a lost connection rolls the transaction back.
   */
  tx?: Transaction;
}

/**
 * A batch `receiver.receive({ max })`: resolves once at least one delivery is buffered, with every
 * buffered delivery up to `max` (an array of 1..max, in arrival order), without waiting for more.
 * `timeoutMs` / `signal` bound the wait for the first one, as for a single receive().
 */
export interface ReceiveBatchOptions extends CallOptions {
  /** The most deliveries to return: a positive integer. */
  max: number;
}

/** Options of a Delivery's accept/release/reject/modify: deadline, cancellation, transaction. */
export interface SettleOptions extends CallOptions {
  /**
   * Settle inside this transaction: the outcome takes effect when it commits; if it rolls back
   * the message is offered again. Resolves once the outcome is sent (the commit confirms it).
   */
  tx?: Transaction;
}

/**
 * Options of {@link Connection.transaction}: `timeoutMs` / `signal` bound each exchange with the
 * broker's coordinator (the attach, the declare, the commit or rollback) and the commit's wait
 * for the sends still in flight (past it they end and the transaction rolls back), not the
 * function itself.
 */
export type TransactionOptions = CallOptions;

/** Options of {@link Connection.openSender}. `timeoutMs` / `signal` bound the attach. */
export interface SenderOptions extends CallOptions {
  /** Link name; default derived from the address and a counter, stable across re-attach. */
  name?: string;
  /** Send pre-settled (at-most-once). Default false: every send waits for the broker's outcome. */
  presettled?: boolean;
  /**
   * Publish to a topic (the target gets the terminus capability `topic`): every message goes to
   * every subscription that exists when the broker commits it (docs/topics.md).
   */
  topic?: boolean;
}

/** Options of {@link Connection.openReceiver}. `timeoutMs` / `signal` bound the attach. */
export interface ReceiverOptions extends CallOptions {
  /** Link name; default derived from the address and a counter, stable across re-attach. */
  name?: string;
  /** Prefetch window topped up automatically. Default 100. 0: grant credit with addCredit(n). */
  credit?: number;
  /** Ask for rcv-settle-mode second (confirmed accept) where offered. Default true. */
  confirmAccept?: boolean;
  /** Message-ids remembered for duplicate suppression. Defaults 10_000 ids, 10 minutes. */
  dedup?:
    | {
        /** Most message-ids remembered. */
        maxIds?: number;
        /** How long a message-id is remembered, ms. */
        maxAgeMs?: number;
      }
    | false;
  /**
   * Ask the broker for a temporary queue of its own naming (a dynamic source; `openReceiver({
   * dynamic: true })`): `receiver.address` is its address once attached (e.g. a reply-to). After
   * a failover the receiver re-attaches to that address; the broker keeps the node for its grace
   * period. The node is deleted when the receiver closes.
   */
  dynamic?: boolean;
  /**
   * A JMS message selector (`apache.org:selector-filter:string`), e.g. `"colour = 'green'"`:
   * the broker only delivers matching messages to this receiver. Refused at attach when malformed.
   */
  selector?: string;
  /**
   * Subscribe to a topic (the source gets the terminus capability `topic`): this receiver's link
   * is its subscription, which gets every message published after the attach is answered
   * (docs/topics.md). Non-durable unless `durable`: it lives while the link does (and through a
   * failover, for the broker's grace period).
   */
  topic?: boolean;
  /**
   * With `topic`: a durable subscription (source durable = unsettled-state, expiry-policy never),
   * kept with its messages across detach, connection loss, failover and broker restarts. It is
   * found again by container-id + link name, so give the connection a fixed `containerId`.
   * `close()` then detaches without ending it; `unsubscribe()` ends it. Without `subscription` (or `name`)
   * the link name is the topic's address: one durable subscription per topic per container-id.
   */
  durable?: boolean;
  /**
   * With `topic`: the subscription's name, used as the link name (in place of `name`), so the
   * subscription is found again by container-id + this name (from another process too).
   */
  subscription?: string;
  /**
   * Ask the broker (capability `quorate:hold-unsettled`) to keep what this receiver holds
   * unsettled for this same receiver when its link goes away without settling it (its connection
   * or its broker member died): for a while (60 s on quorate-broker) only a link with the same
   * container-id and link name gets those messages again, so after a failover they come back here
   * (where duplicate suppression knows them) instead of going to a competing consumer. Give the
   * connection a fixed `containerId`. Brokers without the capability ignore it. Default false.
   * See docs/delivery-contract.md#held-unsettled.
   */
  holdUnsettled?: boolean;
  /**
   * Copy each small message body out of the read buffer it arrived in, so that a delivery kept
   * for long holds only its own bytes. Default false: a body is a view of the client's read slab
   * (256 KiB, shared by the messages of a few reads), which halves the ArrayBuffer bytes a message
   * costs and with them the full collections they bring on
   * (docs/architecture.md#client-receive-allocations); a delivery kept long then keeps its whole
   * slab in memory. Set it when deliveries are held for long, or copy the bodies you keep.
   */
  copyBodies?: boolean;
}

/** Receiver-side confirmation mode actually in force (the broker may refuse `second`). */
export type SettleMode = 'first' | 'second';
