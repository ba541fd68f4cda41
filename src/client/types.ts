/**
 * Public types of the client API: options, results and the typed event maps.
 */
import type { Duplex } from 'node:stream';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { MessageId } from '../codec/public.js';
import type { Logger } from '../common/logger.js';

export type { Logger };

/** Per-call deadline and cancellation, accepted by every async call. */
export interface CallOptions {
  /** Deadline in ms from the call; past it the call rejects with condition `quorate:timeout`. */
  timeoutMs?: number;
  /** Cancels the call; it then rejects with condition `quorate:aborted`. */
  signal?: AbortSignal;
}

/** How failover reconnects: backoff between attempts and when to give up. */
export interface ReconnectOptions {
  /** Give up after this many failed attempts in one outage. Default: Infinity (bounded by time). */
  maxAttempts?: number;
  /** Give up after this long without a connection, in ms. Default 60_000. */
  maxTimeMs?: number;
  /** One attempt (socket, SASL, Open) may take this long, ms. Default 10_000. */
  attemptTimeoutMs?: number;
  /** First backoff delay, ms. Default 50. */
  initialDelayMs?: number;
  /** Largest backoff delay, ms. Default 2_000. */
  maxDelayMs?: number;
  /** Backoff multiplier. Default 2. */
  factor?: number;
  /** Randomize delays (p-retry: each delay multiplied by a random factor in [1, 2)). Default true. */
  randomize?: boolean;
}

/** The member a {@link DialFunction} is asked to connect to, as its URL named it. */
export interface DialTarget {
  /**
   * The URL's scheme. For `'amqps'` the client runs TLS (with the `tls` options) over the stream
   * the dial returns, as it would over TCP; a dial that is its own secure channel uses `amqp://`.
   */
  readonly scheme: 'amqp' | 'amqps';
  /** The URL's host (IPv6 without brackets). */
  readonly host: string;
  /** The URL's port (5672 / 5671 when it has none). */
  readonly port: number;
}

/**
 * Opens the byte stream of one connection attempt, instead of a TCP socket: a Unix domain socket
 * (`net.connect(path)`), an in-memory pipe, a tunnel through a proxy. It returns (or resolves
 * with) a connected duplex stream; the client then runs TLS for `amqps`, SASL and the AMQP
 * handshake over it, within the attempt's timeout. `signal` is aborted when the attempt is given
 * up (its timeout, the connection closing). A dial that throws or rejects fails that attempt
 * with `quorate:connect-failed` and the thrown error as `cause`; failover then asks the dial for
 * the next member.
 */
export type DialFunction = (target: DialTarget, signal: AbortSignal) => Duplex | Promise<Duplex>;

/** Options of {@link connect}. `timeoutMs` / `signal` bound the first connection. */
export interface ConnectOptions extends CallOptions {
  /**
   * One URL or a list: `amqp://[user:pass@]host[:port]` or `amqps://...` (TCP, TLS), or AMQP over
   * WebSocket, `ws://host[:port][/path]` or `wss://...` (the path kept for a reverse proxy's
   * location, docs/websocket.md#client). A list may mix them.
   */
  urls: string | string[];
  /** SASL PLAIN user name for URLs that carry none. With no user name at all: SASL ANONYMOUS. */
  username?: string;
  /** SASL PLAIN password for URLs that carry none. */
  password?: string;
  /** Stable across reconnects; links re-attach under it. Default: a random UUID. */
  containerId?: string;
  /** Our idle timeout (declared in Open): a silent peer is detected within it. Default 10_000. */
  idleTimeoutMs?: number;
  /**
   * Fail over from a member that hangs (docs/failover.md#unresponsive): while it owes answers
   * (unsettled sends, deliveries it said are waiting for our credit) and sends nothing at all for
   * this long, it is probed; it is given up on when the probe is not answered within the larger
   * of this and 4 times the slowest recent probe answer (silence plus deadline capped by the idle
   * timeout). Idle connections keep the idle timeout. Default 250 ms, or off with
   * `reconnect: false` (there is no member to move to: a slow broker would only end the
   * connection); `0` or `false`: off.
   */
  unresponsiveTimeoutMs?: number | false;
  /**
   * TLS options for `amqps://` URLs (ca, cert, key, servername, rejectUnauthorized, ...), and for
   * `wss://` URLs, where they go to the `ws` package's WebSocket (docs/websocket.md#client).
   */
  tls?: TlsConnectionOptions;
  /**
   * Open each attempt's byte stream yourself instead of a TCP socket to the URL's host and port
   * (a Unix socket, an in-memory pipe, a proxy): see {@link DialFunction}. Default: net / tls.
   * For `amqp://` and `amqps://` URLs only: `ws://` and `wss://` URLs always open a WebSocket.
   */
  dial?: DialFunction;
  /** Virtual host sent as Open hostname. Default: the URL's host. */
  hostname?: string;
  /** Largest frame we accept. Default 1 MiB. */
  maxFrameSize?: number;
  /** Where the library logs (pino-compatible). Default: silent. */
  logger?: Logger;
  /**
   * Failover: reconnect to any member when the connection fails and replay what was not
   * settled. Default: on. `false`: a failed connection fails every pending operation.
   */
  reconnect?: ReconnectOptions | false;
  /**
   * The first connect() waits for members that are not there yet. Default false: when every
   * configured member refused the connection or did not speak AMQP on the first pass (and none
   * has ever connected), connect() rejects at once (`quorate:connect-failed`, each member's cause
   * in the message and in `info.members`) instead of retrying for `reconnect.maxTimeMs`. True:
   * keep retrying within the reconnect limits, for clients started before their brokers.
   * Failover after a first success always retries.
   */
  waitOnFirstConnect?: boolean;
  /** How members learned from brokers change the pool: 'replace' (default, as Qpid JMS) or 'add'. */
  membershipPolicy?: 'replace' | 'add';
  /** Try members in random order (default) or in the configured order. */
  randomizeMembers?: boolean;
  /** Bound on sends buffered while disconnected. Defaults 10_000 messages, 64 MiB. */
  bufferLimit?: {
    /** Most messages buffered. */
    messages?: number;
    /** Most encoded bytes buffered. */
    bytes?: number;
  };
  /** At the buffer bound: wait for room (default) or reject at once. */
  onFull?: 'wait' | 'reject';
}

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

/** An AMQP error as carried in a rejected outcome. */
export interface OutcomeError {
  /** The AMQP error condition symbol, e.g. `amqp:resource-limit-exceeded`. */
  condition: string;
  /** The broker's human-readable description. */
  description?: string;
  /** Extra fields the broker attached. */
  info?: Record<string, unknown>;
}

/** The broker's verdict on a delivery (docs/delivery-contract.md#outcomes). */
export type Outcome =
  | {
      /** The broker took the message (for a send: committed, docs/delivery-contract.md#commit-point). */
      state: 'accepted';
    }
  | RefusedOutcome;

/** An outcome other than accepted: what a SendError's `outcome` holds. */
export type RefusedOutcome =
  | {
      /** The broker refused the message; `error` says why. */
      state: 'rejected';
      /** The reason the broker gave. */
      error?: OutcomeError;
    }
  | {
      /** The broker did not process the message; it may be sent again. */
      state: 'released';
    }
  | {
      /** Like released, with changes to the delivery annotations. */
      state: 'modified';
      /** The delivery counts as a failed attempt (delivery-count + 1). */
      deliveryFailed?: boolean;
      /** Do not offer the message to this link again. */
      undeliverableHere?: boolean;
    };

/**
 * What a resolved {@link Sender.send} means: the broker accepted the message. Any other outcome
 * (rejected, released, modified) rejects send() with a SendError whose `outcome` says which.
 */
export interface SendResult {
  /** Always 'accepted': other outcomes reject. */
  state: 'accepted';
  /** The message-id the message was sent with (the application's, or the one assigned). */
  messageId: MessageId;
  /** True if this delivery was written more than once (replayed after a failover). */
  resent: boolean;
}

/** The outcome an application gives a delivery (accept, reject, release, modify). */
export type SettleOutcome = 'accepted' | 'rejected' | 'released' | 'modified';

/** Options of {@link Delivery.modify}. */
export interface ModifyOptions {
  /** Count this as a failed delivery attempt (delivery-count + 1). */
  deliveryFailed?: boolean;
  /** Do not offer the message to this receiver's link again. */
  undeliverableHere?: boolean;
}

/** Reported by the `failover` event once the connection works again on another (or the same) member. */
export interface FailoverEvent {
  /** URL of the member that was lost (absent if none was connected). */
  from?: string;
  /** URL of the member now in use. */
  to: string;
  /**
   * Why the previous connection ended: `'unresponsive'` when the member stopped answering while
   * it owed answers (docs/failover.md#unresponsive), else the error's message.
   */
  reason?: string;
  /** From losing the connection to having re-attached and re-sent, ms. */
  durationMs: number;
  /** Deliveries re-sent (queued and in doubt, docs/delivery-contract.md#in-doubt-resend). */
  resent: number;
  /** Links re-attached. */
  reattached: number;
}

/** The events of a {@link Connection}: `conn.on(name, listener)` is type-checked against this map. */
export interface ConnectionEvents {
  /** A physical connection is open (the first one, and each one after a failover). */
  connected: [
    info: {
      /** The member's URL. */
      url: string;
      /** Our container-id. */
      containerId: string;
      /** The broker's container-id. */
      remoteContainerId: string;
    },
  ];
  /** A physical connection was lost; failover follows unless reconnect is off. */
  disconnected: [
    info: {
      /** The member's URL. */
      url: string;
      /** Why it was lost. */
      error?: Error;
    },
  ];
  /** A reconnect attempt is about to be made. */
  reconnecting: [
    info: {
      /** Attempt number in this outage, from 1. */
      attempt: number;
      /** Backoff before this attempt, ms. */
      delayMs: number;
      /** The member about to be tried. */
      url: string;
      /** Why the previous attempt failed, if one did (also published during connect()). */
      error?: Error;
    },
  ];
  /** Failover completed: links re-attached, unsettled sends re-sent. */
  failover: [info: FailoverEvent];
  /** The member list changed (docs/failover.md#membership). */
  membership: [
    info: {
      /** Every member's URL now. */
      members: string[];
      /** URLs that joined. */
      added: string[];
      /** URLs that left. */
      removed: string[];
    },
  ];
  /** A written send lost its connection before its outcome arrived; it will be re-sent. */
  inDoubt: [
    info: {
      /** The send's message-id. */
      messageId: MessageId;
      /** The sender's address. */
      address: string;
    },
  ];
  /** Failover gave up (or is off); emitted only when someone listens, before `closed`. */
  error: [error: Error];
  /** The connection is closed for good (by `close()` or after reconnection gave up). */
  closed: [
    info: {
      /** Why, if it was not closed by the application. */
      error?: Error;
    },
  ];
}

/** The events of a {@link Sender} or {@link Receiver}. */
export interface LinkEvents {
  /** (Re-)attached: after openSender/openReceiver and after every failover. */
  attached: [];
  /** The link is gone for now (connection lost: it re-attaches) or for good (`closed`). */
  detached: [
    info: {
      /** Why it detached. */
      error?: Error;
      /** True if the link is closed for good. */
      closed: boolean;
    },
  ];
  /** An error on the link that no call awaits. */
  error: [error: Error];
}

/** Receiver-side confirmation mode actually in force (the broker may refuse `second`). */
export type SettleMode = 'first' | 'second';
