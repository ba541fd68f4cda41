/**
 * The public face of the client: what `quorate` exports for Connection, Sender, Receiver and
 * Delivery. The implementation classes (connection.ts, sender.ts, receiver.ts, delivery.ts)
 * implement these and stay unexported, so their internals (the protocol engine, the replay
 * journal, writable state) never reach the published declarations.
 */
import type { EventEmitter } from 'eventemitter3';
import type { DeliveryState } from '../codec/contract.js';
import type { Message, MessageBody } from '../codec/message.js';
import type { Management } from './management.js';
import type {
  CallOptions,
  ConnectionEvents,
  LinkEvents,
  ModifyOptions,
  OutcomeError,
  ReceiveBatchOptions,
  ReceiverOptions,
  SenderOptions,
  SendOptions,
  SendResult,
  SettleMode,
  SettleOptions,
  Transaction,
  TransactionOptions,
} from './types.js';

/** Where a connection is in its life: `reconnecting` while failing over. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closing' | 'closed';
/** Where a sender or receiver is: `detached` while its connection fails over. */
export type LinkState = 'attaching' | 'attached' | 'detached' | 'closing' | 'closed';

/** conn.stats(): counters since connect() and the state of the send buffer now. */
export interface ConnectionStats {
  /** Deliveries written for the first time. */
  sent: number;
  /** Sends the broker accepted. */
  accepted: number;
  /** Sends the broker settled with rejected, released or modified. */
  notAccepted: number;
  /** Deliveries written again after a failover (same message-id). */
  resent: number;
  /** Written and waiting for the broker's outcome (on this connection or to be re-sent). */
  inFlight: number;
  /** Held in the send buffer (from send() to the outcome): messages and their encoded bytes. */
  buffered: {
    /** Messages held. */
    messages: number;
    /** Their encoded bytes. */
    bytes: number;
  };
  /** Sends waiting for room in the buffer (onFull 'wait'). */
  waiting: number;
  /** Completed failovers. */
  failovers: number;
  /** The member connected to now (undefined while reconnecting). */
  member: string | undefined;
  /** The connection's state now. */
  state: ConnectionState;
}

/** What the broker said about itself in its Open. */
export interface RemoteOpen {
  /** The broker's container-id. */
  containerId: string;
  /** Its Open properties (e.g. the failover-server-list). */
  properties?: Record<string, unknown>;
  /** Its offered capabilities. */
  offeredCapabilities?: string[];
}

/** A logical connection: one container-id, any number of physical connections (failover). */
export interface Connection extends EventEmitter<ConnectionEvents>, AsyncDisposable {
  /** Our AMQP container-id, the same on every physical connection. */
  readonly containerId: string;
  /** Where the connection is in its life. */
  readonly state: ConnectionState;
  /** The URL of the member connected to (undefined while reconnecting). */
  readonly url: string | undefined;
  /** The pool's members, in selection order. */
  readonly members: string[];
  /** The broker's Open on the current connection. */
  readonly remoteOpen: RemoteOpen | undefined;
  /** Counters since connect() and the send buffer now. */
  stats(): ConnectionStats;
  /** Attach a sender to `address`; resolves once the broker attached it. */
  openSender(address: string, options?: SenderOptions): Promise<Sender>;
  /** `T` types `delivery.message.body`: a type-level promise, not checked on decode. */
  openReceiver<T = MessageBody>(address: string, options?: ReceiverOptions): Promise<Receiver<T>>;
  /** A receiver on a temporary queue the broker names (`receiver.address`), e.g. for replies. */
  openReceiver<T = MessageBody>(options: ReceiverOptions & { dynamic: true }): Promise<Receiver<T>>;
  /**
   * Run `fn` in a local transaction (AMQP 1.0 part 4): sends and settlements given `{ tx }` take
   * effect together when `fn` resolves (commit) and not at all when it throws (rollback: the
   * function's error is rethrown). Resolves with what `fn` returned, once the broker committed.
   * Rejects with a TransactionError when the transaction did not commit for another reason (its
   * connection was lost, so the broker rolled it back; the broker refused), and with a
   * ClientError 'quorate:in-doubt' when the commit was sent and its answer was lost.
   */
  transaction<R>(fn: (tx: Transaction) => Promise<R> | R, options?: TransactionOptions): Promise<R>;
  /**
   * Queue management over RabbitMQ 4's HTTP-over-AMQP protocol (docs/client.md#management):
   * attaches the `/management` link pair and resolves once both are attached. Works against
   * quorate-broker and RabbitMQ 4.
   */
  management(options?: CallOptions): Promise<Management>;
  /** Close for good: pending sends reject ('quorate:closed'), receivers end. */
  close(options?: CallOptions): Promise<void>;
}

/** A sending link, from {@link Connection.openSender}: re-attached and re-sent after failover. */
export interface Sender extends EventEmitter<LinkEvents>, AsyncDisposable {
  /** The link name, kept across re-attach. */
  readonly name: string;
  /** The target address. */
  readonly address: string;
  /** Sends are pre-settled (at-most-once). */
  readonly presettled: boolean;
  /** Publishes to a topic (docs/topics.md). */
  readonly topic: boolean;
  /** Where the link is. */
  readonly state: LinkState;
  /** True while attached on a live connection. */
  readonly isAttached: boolean;
  /** Resolves when the broker accepted the message; rejects with SendError otherwise. */
  send<T = MessageBody>(message: Message<T>, options?: SendOptions): Promise<SendResult>;
  /**
   * Send several messages in one socket write; one result per message, in order (each as
   * `send()` would end: a refusal or a deadline rejects only that message's promise).
   */
  sendBatch<T = MessageBody>(messages: Message<T>[], options?: SendOptions): Promise<SendResult>[];
  /** Detach for good; pending sends reject with 'quorate:closed'. */
  close(options?: CallOptions): Promise<void>;
}

/** A receiving link, from {@link Connection.openReceiver}: iterate it with `for await` or call receive(). */
export interface Receiver<T = MessageBody>
  extends EventEmitter<LinkEvents>,
    AsyncIterable<Delivery<T>>,
    AsyncDisposable {
  /** The link name, kept across re-attach. */
  readonly name: string;
  /** The source address. */
  readonly address: string;
  /** Where the link is. */
  readonly state: LinkState;
  /** 'second' when the broker confirms our outcomes (accept() waits for it). */
  readonly settleMode: SettleMode;
  /** True when accept() resolves only after the broker confirmed it. */
  readonly confirmedAccept: boolean;
  /** Redeliveries dropped by the receiver's dedup so far. */
  readonly duplicatesSuppressed: number;
  /** Received, not yet handed out. */
  readonly buffered: number;
  /** Link credit as granted on the current link. */
  readonly linkCredit: number;
  /** Grant `n` more messages (receivers opened with `credit: 0`). */
  addCredit(n: number): void;
  /**
   * Ask the broker to use up the granted credit now and then set it to zero; resolves when it
   * answered (what it had is buffered for receive()).
   */
  drain(options?: CallOptions): Promise<void>;
  /**
   * A batch: waits until at least one delivery is buffered, then resolves at once with every
   * buffered delivery up to `max` (1..max, in arrival order; it never waits for more). With
   * nothing by the deadline it rejects with the same `quorate:timeout` error as a single
   * receive(); it rejects like receive() when the receiver fails or closes. Each delivery is
   * deduplicated and handed out exactly as by a single receive().
   */
  receive(options: ReceiveBatchOptions): Promise<Delivery<T>[]>;
  /** The next delivery; rejects at the deadline or when the receiver fails. */
  receive(options?: CallOptions): Promise<Delivery<T>>;
  /**
   * Detach for good; deliveries not handed out are dropped (the broker offers them again). A
   * durable topic subscription stays (detach with closed=false): unsubscribe() ends it.
   */
  close(options?: CallOptions): Promise<void>;
  /** End this receiver's topic subscription (detach with closed=true): the broker deletes it. */
  unsubscribe(options?: CallOptions): Promise<void>;
}

/**
 * A message as a receiver hands it over: `body` is typed `T`, the receiver's type parameter (a
 * type-level promise about what senders put on the address, not checked on decode). A message
 * that came without a body section has `body` undefined: an address that may carry such
 * messages is typed `openReceiver<Order | undefined>(...)`.
 */
export type ReceivedMessage<T = MessageBody> = Message<T> & {
  /** The payload, typed `T` (undefined for a message without a body section). */
  body: T;
};

/** One message handed to the application; settle it once. `T` types the body (type-level only). */
export interface Delivery<T = MessageBody> {
  /** The message, decoded. */
  readonly message: ReceivedMessage<T>;
  /** The outcome the application chose, once it settled (with `tx`: a transactional-state wrapping it). */
  readonly outcome: DeliveryState | undefined;
  /** True once accept/release/reject/modify was called. */
  readonly settled: boolean;
  /** The broker's delivery-count header (0 when absent). */
  readonly deliveryCount: number;
  /** Done: the broker removes it (confirmed in rcv-settle-mode second; with `tx`, at commit). */
  accept(options?: SettleOptions): Promise<void>;
  /** Give it back unchanged. */
  release(options?: SettleOptions): Promise<void>;
  /** Invalid message: the broker dead-letters (or drops) it. */
  reject(error?: OutcomeError, options?: SettleOptions): Promise<void>;
  /** Give it back modified (a failed attempt, or not to this link again). */
  modify(options?: ModifyOptions & SettleOptions): Promise<void>;
}
