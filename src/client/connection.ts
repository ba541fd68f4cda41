/**
 * The logical Connection's public API (api.ts `Connection`): open senders, receivers, the
 * management link pair and transactions, counters, close. What it stands on: its links
 * (connection-links.ts) and its failover (connection-failover.ts). connect() makes one here.
 */
import type { MessageBody } from '../codec/message.js';
import { ArgumentTypeError, ClientError } from '../errors.js';
import { describeServer, parseServerUrl } from '../failover/index.js';
import { MANAGEMENT_ADDRESS, MANAGEMENT_LINK_NAME, MANAGEMENT_PAIRED_PROPERTY } from '../wire-extensions.js';
import type { ConnectionStats, Connection as PublicConnection } from './api.js';
import { FailoverConnection } from './connection-failover.js';
import { Coordinator } from './coordinator.js';
import { type ConnectTraceContext, connectChannel } from './diagnostics.js';
import { type Management, ManagementClient } from './management.js';
import { Receiver } from './receiver.js';
import { Sender } from './sender.js';
import { runTransaction } from './transaction.js';
import type {
  CallOptions,
  ConnectOptions,
  Transaction as PublicTransaction,
  ReceiverOptions,
  SenderOptions,
  TransactionOptions,
} from './types.js';

/**
 * A logical connection to a broker or cluster, made by {@link connect}. It outlives its physical
 * connections: when one fails it moves to another member, re-attaches its links and re-sends
 * what was in flight (docs/failover.md). Events: {@link ConnectionEvents}. Exported as the
 * `Connection` interface (api.ts).
 */
export class Connection extends FailoverConnection implements PublicConnection {
  /** The coordinator link, attached at the first transaction(). */
  private coordinator: Coordinator | undefined;
  private linkCounter = 0;
  /** Management link pairs opened so far (each pair gets its own link name). */
  private managementPairs = 0;

  /** Counters since connect() and the send buffer now (see ConnectionStats). */
  stats(): ConnectionStats {
    this.sends.syncWritten();
    const c = this.sends.counters;
    const phases = this.journal.counts();
    return {
      sent: c.sent,
      accepted: c.accepted,
      notAccepted: c.notAccepted,
      resent: c.resent,
      inFlight: phases.sent + phases['in-doubt'],
      buffered: { messages: this.journal.size, bytes: this.journal.bytes },
      waiting: this.sends.waiting,
      failovers: this.failovers,
      member: this.url,
      state: this.state,
    };
  }

  /** `await using conn = await connect(...)`: closes the connection. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ------------------------------------------------------------------ public API

  /** Attach a sender to `address`; resolves once the broker attached it. */
  async openSender(address: string, options: SenderOptions = {}): Promise<Sender> {
    this.assertUsable();
    const sender = new Sender(this, address, options, `quorate-sender-${address}-${++this.linkCounter}`);
    return this.attached(sender, options);
  }

  /**
   * Attach a receiver to `address`, or (`openReceiver({ dynamic: true })`) to a temporary queue
   * the broker names (`receiver.address`); resolves once the broker attached it (credit then flows).
   * `T` types `delivery.message.body`: a type-level promise about what the senders put there,
   * not checked when messages are decoded.
   */
  openReceiver<T = MessageBody>(address: string, options?: ReceiverOptions): Promise<Receiver<T>>;
  openReceiver<T = MessageBody>(options: ReceiverOptions & { dynamic: true }): Promise<Receiver<T>>;
  async openReceiver<T = MessageBody>(
    addressOrOptions: string | (ReceiverOptions & { dynamic: true }),
    maybeOptions: ReceiverOptions = {},
  ): Promise<Receiver<T>> {
    this.assertUsable();
    const dynamic = typeof addressOrOptions !== 'string';
    const given = dynamic ? addressOrOptions : maybeOptions;
    const options = given.dedup === undefined && this.bounds ? { ...given, dedup: this.bounds.dedup } : given;
    const address = dynamic ? '' : addressOrOptions;
    const receiver = new Receiver<T>(
      this,
      address,
      options,
      `quorate-receiver-${dynamic ? 'dynamic' : address}-${++this.linkCounter}`,
    );
    return this.attached(receiver, options);
  }

  /** Attach the `/management` link pair (management.ts); one pair per call, each its own link name. */
  async management(options: CallOptions = {}): Promise<Management> {
    this.assertUsable();
    const n = ++this.managementPairs;
    const name = n === 1 ? MANAGEMENT_LINK_NAME : `${MANAGEMENT_LINK_NAME}-${n}`;
    const paired = { [MANAGEMENT_PAIRED_PROPERTY]: true };
    const receiver = new Receiver(this, MANAGEMENT_ADDRESS, { name, confirmAccept: false }, name);
    receiver.attachProperties = paired;
    const sender = new Sender(this, MANAGEMENT_ADDRESS, { name, presettled: true }, name);
    sender.attachProperties = paired;
    await this.attached(receiver, options);
    try {
      await this.attached(sender, options);
    } catch (e) {
      await receiver.close().catch(() => undefined);
      throw e;
    }
    return new ManagementClient(sender, receiver);
  }

  /**
   * Run `fn` in a local transaction: declared on the coordinator link (attached at the first
   * call), committed when `fn` resolves, rolled back when it throws (transaction.ts).
   */
  async transaction<R>(
    fn: (tx: PublicTransaction) => Promise<R> | R,
    options?: TransactionOptions,
  ): Promise<R> {
    this.assertUsable();
    if (typeof fn !== 'function')
      throw new ArgumentTypeError('ERR_INVALID_ARG_TYPE', 'transaction() needs a function');
    let coordinator = this.coordinator;
    if (!coordinator || coordinator.failure) {
      coordinator = new Coordinator(this, `quorate-coordinator-${this.containerId}-${++this.linkCounter}`);
      this.coordinator = coordinator;
      this.register(coordinator);
    }
    return runTransaction(this, coordinator, fn, options);
  }

  /**
   * Close for good: pending sends reject ('quorate:closed', with inDoubt), receivers end, then
   * the physical connection is closed (the peer's Close awaited up to `timeoutMs`, default 2 s).
   */
  close(options: CallOptions = {}): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    if (this.state === 'closing') return new Promise((r) => this.closedWaiters.push(r));
    this.state = 'closing';
    this.stop.abort(new ClientError('quorate:closed', 'connection closed'));
    const error = new ClientError('quorate:closed', 'connection closed by the application');
    this.failAllLinks(error);
    const phys = this.phys;
    if (!phys || phys.isLost) {
      this.finish(undefined);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.closedWaiters.push(resolve);
      const timer = setTimeout(() => phys.destroy(), options.timeoutMs ?? 2_000);
      timer.unref?.();
      this.closedWaiters.push(() => clearTimeout(timer));
      options.signal?.addEventListener('abort', () => phys.destroy(), { once: true });
      phys.close();
    });
  }
}

/**
 * Connect to the first reachable member of `options.urls`; resolves once Open is exchanged.
 * Rejects at once on a permanent cause (bad URL, DNS, TLS verification, SASL, a peer that is not
 * AMQP), after the reconnect limits on transient ones, and with a TypeError/RangeError (with
 * `code`) when the options are missing or wrong.
 */
export function connect(options: ConnectOptions): Promise<PublicConnection> {
  return connectWithBounds(options, undefined);
}

/** Defaults bounding what a connection keeps in memory, for runtimes with less of it (a tab). */
export interface MemoryBounds {
  /** Default `bufferLimit` (replay buffer) when connect() is given none. */
  bufferLimit: { messages: number; bytes: number };
  /** Default `dedup` window of each receiver opened without one. */
  dedup: { maxIds: number; maxAgeMs: number };
}

/** connect() with other memory defaults (the browser entry's). */
export async function connectWithBounds(
  options: ConnectOptions,
  bounds: MemoryBounds | undefined,
): Promise<PublicConnection> {
  const conn = new Connection(options, bounds);
  const run = async (): Promise<PublicConnection> => {
    await conn.start({ timeoutMs: options.timeoutMs, signal: options.signal });
    return conn;
  };
  if (!connectChannel.hasSubscribers) return run();
  const urls = typeof options.urls === 'string' ? [options.urls] : options.urls;
  const context: ConnectTraceContext = {
    urls: urls.map((u) => describeServer(parseServerUrl(u))),
    containerId: conn.containerId,
  };
  return connectChannel.tracePromise(async () => {
    const c = await run();
    context.url = c.url;
    return c;
  }, context);
}
