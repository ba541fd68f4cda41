/**
 * The logical Connection: one container-id, one replay journal, and a set of logical links that
 * outlive any number of physical connections. When the physical connection fails (socket error,
 * idle timeout, broker Close such as amqp:connection:forced 'not quorate'), it marks written
 * deliveries in doubt, moves to another member of the pool (p-retry: exponential, randomized,
 * limits by attempts and total time), re-attaches every link under the same names, replays the
 * journal in order, and reports each step as an event.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { MessageBody } from '../codec/message.js';
import { ArgumentTypeError, ClientError } from '../errors.js';
import {
  describeServer,
  HeaderDeadline,
  type PoolChange,
  parseServerUrl,
  type ReplayJournal,
  type ServerAddress,
  ServerPool,
} from '../failover/index.js';
import type { EngineEvent } from '../protocol/index.js';
import {
  isNotQuorate,
  MANAGEMENT_ADDRESS,
  MANAGEMENT_LINK_NAME,
  MANAGEMENT_PAIRED_PROPERTY,
  MEMBERSHIP_ADDRESS,
  MEMBERSHIP_CAPABILITY,
} from '../wire-extensions.js';
import type { ConnectionState, ConnectionStats, Connection as PublicConnection } from './api.js';
import { describeCause } from './connect-errors.js';
import { checkConnectOptions } from './connect-options.js';
import { Coordinator } from './coordinator.js';
import {
  type ConnectTraceContext,
  connectChannel,
  failoverChannel,
  membershipChannel,
  publish,
  reconnectingChannel,
} from './diagnostics.js';
import { loggerFromEnv } from './env-logger.js';
import type { ClientLink } from './link-base.js';
import { type Management, ManagementClient } from './management.js';
import { now, type PhysicalConnection, type PhysicalHandler } from './physical.js';
import { Receiver } from './receiver.js';
import {
  dialMembers,
  isRedirect,
  type ResolvedReconnect,
  resolveReconnect,
  unresponsiveHoldMs,
} from './reconnect.js';
import { type PendingSend, SendBuffer, type SendWaiter } from './send-buffer.js';
import { Sender } from './sender.js';
import { runTransaction, type Transaction } from './transaction.js';
import type {
  CallOptions,
  ConnectionEvents,
  ConnectOptions,
  FailoverEvent,
  Logger,
  Transaction as PublicTransaction,
  ReceiverOptions,
  SenderOptions,
  TransactionOptions,
} from './types.js';
import { headerDeadlineOptions, isUnresponsive, unresponsiveFloorMs } from './unresponsive.js';

/**
 * A logical connection to a broker or cluster, made by {@link connect}. It outlives its physical
 * connections: when one fails it moves to another member, re-attaches its links and re-sends
 * what was in flight (docs/failover.md). Events: {@link ConnectionEvents}. Exported as the
 * `Connection` interface (api.ts).
 */
export class Connection extends EventEmitter<ConnectionEvents> implements PublicConnection {
  /** Our AMQP container-id, the same on every physical connection. */
  readonly containerId: string;
  /** Where the connection is in its life. */
  state: ConnectionState = 'connecting';
  /** @internal every send of every sender: one bound (messages, bytes) per connection. */
  readonly sends: SendBuffer;
  /** @internal */
  readonly logger: Logger | undefined;
  /** @internal open transactions: rolled back (failed) when their physical connection dies. */
  readonly transactions = new Set<Transaction>();
  /** The coordinator link, attached at the first transaction(). */
  private coordinator: Coordinator | undefined;
  private readonly options: ConnectOptions;
  private readonly reconnectOptions: ResolvedReconnect;
  private readonly pool: ServerPool<unknown>;
  /** How soon members send their first byte: a failover's dial deadline (off with the suspicion). */
  private readonly firstByte: HeaderDeadline | undefined;
  private phys: PhysicalConnection | undefined;
  private physServer: ServerAddress<unknown> | undefined;
  private readonly links = new Set<ClientLink>();
  private membership: Receiver | undefined;
  private linkCounter = 0;
  /** Management link pairs opened so far (each pair gets its own link name). */
  private managementPairs = 0;
  private readonly stop = new AbortController();
  private closeError: Error | undefined;
  private failovers = 0;
  /** The last failed connection attempt's error: the cause of a connect() deadline error. */
  private lastAttemptError: Error | undefined;
  private closedWaiters: (() => void)[] = [];
  private readonly handler: PhysicalHandler = {
    onEvent: (ev) => this.onEngineEvent(ev),
    onLost: (phys, error) => this.onPhysicalLost(phys, error),
  };

  /**
   * @internal use connect(). `bounds`: other defaults for the replay buffer and the receivers'
   * dedup windows (the browser build's, docs/websocket.md#browser-memory); absent: the documented ones.
   */
  constructor(
    options: ConnectOptions,
    private readonly bounds?: MemoryBounds,
  ) {
    super();
    checkConnectOptions(options);
    this.options = options;
    this.logger = options.logger ?? loggerFromEnv();
    this.containerId = options.containerId ?? randomUUID();
    this.reconnectOptions = resolveReconnect(options.reconnect);
    const urls = typeof options.urls === 'string' ? [options.urls] : options.urls;
    this.pool = new ServerPool<unknown>(
      urls.map((url) => ({ url, options: undefined })),
      {
        randomize: options.randomizeMembers ?? true,
        serverListAction: options.membershipPolicy ?? 'replace',
        // docs/security.md#client-credentials-and-learned-members
        onIgnored: (ignored) =>
          this.logger?.warn?.(
            ignored,
            ignored.reason === 'weaker-scheme'
              ? `ignoring ${ignored.count} learned member(s) with a weaker scheme than ${ignored.via ?? 'the configured URLs'}: credentials are not sent where TLS would not protect them`
              : `ignoring ${ignored.count} learned member(s) over the cap of learned members`,
          ),
      },
    );
    const unresponsiveMs = unresponsiveFloorMs(options.unresponsiveTimeoutMs, this.reconnectOptions.enabled);
    this.firstByte =
      unresponsiveMs !== undefined ? new HeaderDeadline(headerDeadlineOptions(unresponsiveMs)) : undefined;
    const bufferLimit = bounds ? { ...bounds.bufferLimit, ...options.bufferLimit } : options.bufferLimit;
    this.sends = new SendBuffer({ ...options, bufferLimit }, () =>
      this.closeError || this.state === 'closing' || this.state === 'closed'
        ? (this.closeError ?? new ClientError('quorate:closed', 'connection closed'))
        : undefined,
    );
  }

  /** @internal the replay journal: sends from send() until the broker settles them (use stats()). */
  get journal(): ReplayJournal<PendingSend, SendWaiter> {
    return this.sends.journal;
  }

  /** The URL of the member we are connected to (undefined while reconnecting). */
  get url(): string | undefined {
    return this.phys?.url;
  }

  /** The pool's members, in selection order. */
  get members(): string[] {
    return this.pool.servers().map((s) => describeServer(s));
  }

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

  /** The broker's Open properties and capabilities on the current connection. */
  get remoteOpen(): PhysicalConnection['remoteOpen'] {
    return this.phys?.remoteOpen;
  }

  /** @internal connect() runs this: tries the members like a reconnect. */
  async start(options: CallOptions): Promise<void> {
    const onAbort = () => this.stop.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(
            () =>
              this.stop.abort(
                new ClientError(
                  'quorate:timeout',
                  `connect timed out after ${options.timeoutMs} ms${this.lastAttemptError ? ` (last attempt: ${describeCause(this.lastAttemptError)})` : ''}`,
                  this.lastAttemptError ? { cause: this.lastAttemptError } : {},
                ),
              ),
            options.timeoutMs,
          )
        : undefined;
    try {
      const { phys, server } = await this.establish(true);
      this.adopt(phys, server);
      this.logger?.info?.({ url: phys.url, containerId: this.containerId }, 'connected');
    } catch (e) {
      this.state = 'closed';
      throw this.stop.signal.aborted ? connectAbortError(this.stop.signal.reason, e) : e;
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
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

  // ------------------------------------------------------------------ for links (internal)

  /** @internal write pending output once the microtask queue is drained. */
  kick(): void {
    this.phys?.pump();
  }

  /** @internal the current physical connection if it runs `engine` and is alive. */
  physicalFor(engine: PhysicalConnection['engine']): PhysicalConnection | undefined {
    const p = this.phys;
    return p && !p.isLost && p.engine === engine ? p : undefined;
  }

  /** @internal */
  unregister(link: ClientLink): void {
    this.links.delete(link);
  }

  /** @internal a link was lost under a live connection: fail the connection over. */
  linkLost(link: ClientLink, error: Error): void {
    const phys = this.phys;
    this.logger?.warn?.({ link: link.name, error: error.message }, 'link lost; failing over');
    if (!phys || phys.isLost) return;
    // do not wait for a Close handshake: everything written on this connection is now in doubt
    phys.destroy(error);
  }

  // ------------------------------------------------------------------ internals: links

  /** Registers a new link and waits for its first attach; a link that never attached fails. */
  private async attached<L extends ClientLink & { whenAttached(o: CallOptions): Promise<void> }>(
    link: L,
    options: CallOptions,
  ): Promise<L> {
    this.register(link);
    try {
      await link.whenAttached(options);
    } catch (e) {
      link.fail(e as Error);
      throw e;
    }
    return link;
  }

  private register(link: ClientLink): void {
    this.links.add(link);
    const phys = this.phys;
    if (phys && !phys.isLost && this.state === 'open') {
      try {
        link.attachTo(phys);
      } catch (e) {
        // e.g. no free channel: the link fails; a dying connection re-attaches it on the next one
        if (phys.isLost) return;
        throw e;
      }
      phys.pump();
    }
  }

  private assertUsable(): void {
    if (this.state === 'closing' || this.state === 'closed') {
      throw this.closeError ?? new ClientError('quorate:closed', 'connection closed');
    }
  }

  private failAllLinks(error: Error): void {
    for (const tx of this.transactions) tx.lose(error);
    for (const link of [...this.links]) link.fail(error);
    this.links.clear();
    // anything left (waiting for room, or of senders already gone) fails too
    this.sends.failAll(error);
  }

  private onEngineEvent(ev: EngineEvent): void {
    let target: unknown;
    switch (ev.type) {
      case 'link-attached':
      case 'link-detached':
        target = ev.link.context;
        break;
      case 'link-credit':
      case 'link-flow':
      case 'message':
      case 'delivery-aborted':
        target = ev.link.context;
        break;
      case 'delivery-update':
        target = ev.delivery.link.context;
        break;
      case 'remote-close':
        this.logger?.info?.({ url: this.url, error: ev.error }, 'broker closed the connection');
        return;
      case 'protocol-error':
        this.logger?.warn?.({ url: this.url, scope: ev.scope, error: ev.error }, 'protocol error');
        return;
      case 'attach-request':
        // we never accept peer-initiated links
        ev.link.refuse({ condition: 'amqp:not-allowed', description: 'client does not accept links' });
        this.kick();
        return;
      default:
        return;
    }
    (target as ClientLink | undefined)?.onEngineEvent(ev);
  }

  // ------------------------------------------------------------------ internals: failover

  /** Try members (p-retry) until one completes Open. */
  private establish(initial: boolean): Promise<{ phys: PhysicalConnection; server: ServerAddress<unknown> }> {
    return dialMembers(
      {
        pool: this.pool,
        options: this.options,
        reconnect: this.reconnectOptions,
        containerId: this.containerId,
        logger: this.logger,
        ...(this.firstByte ? { firstByte: this.firstByte } : {}),
        stop: this.stop.signal,
        onReconnecting: (info) => {
          this.emit('reconnecting', info);
          publish(reconnectingChannel, () => ({ ...info, containerId: this.containerId }));
        },
        onAttemptFailed: ({ attempt, url, error, permanent }) => {
          this.lastAttemptError = error;
          this.logger?.info?.(
            { url, attempt, permanent, error },
            `connection attempt ${attempt} to ${url} failed: ${describeCause(error)}`,
          );
        },
      },
      initial,
    );
  }

  /** A physical connection completed Open: make it current, re-attach every link, replay. */
  private adopt(
    phys: PhysicalConnection,
    server: ServerAddress<unknown>,
  ): { reattached: number; resent: number } {
    const open = phys.remoteOpen;
    this.phys = phys;
    this.physServer = server;
    this.pool.connected(server);
    this.state = 'open';
    if (open) this.reportMembership(this.pool.applyOpenProperties(open.properties, server));
    const resent = this.journal.replayPlan().resent;
    let reattached = 0;
    if (open?.offeredCapabilities?.includes(MEMBERSHIP_CAPABILITY) && !this.membership)
      this.startMembershipFeed();
    for (const link of this.links) {
      if (!link.shouldAttach(phys)) continue;
      try {
        link.attachTo(phys);
        reattached++;
      } catch (e) {
        // the connection died between Open and now: setHandler below reports the loss
        this.logger?.debug?.({ link: link.name, error: (e as Error).message }, 'attach skipped');
      }
    }
    phys.setHandler(this.handler);
    phys.pump();
    this.emit('connected', {
      url: phys.url,
      containerId: this.containerId,
      remoteContainerId: open?.containerId ?? '',
    });
    return { reattached, resent };
  }

  private startMembershipFeed(): void {
    const r = new Receiver(
      this,
      MEMBERSHIP_ADDRESS,
      { credit: 10, dedup: false, confirmAccept: false },
      `quorate-membership-${this.containerId}`,
      (phys) => phys.remoteOpen?.offeredCapabilities?.includes(MEMBERSHIP_CAPABILITY) === true,
    );
    this.membership = r;
    this.links.add(r);
    void (async () => {
      try {
        for await (const d of r) {
          this.reportMembership(this.pool.applyMemberList(d.message.body, this.physServer));
          d.accept().catch(() => undefined);
        }
      } catch (e) {
        this.logger?.warn?.({ error: (e as Error).message }, 'membership feed ended');
      }
    })();
  }

  private reportMembership(change: PoolChange<unknown>): void {
    if (change.added.length === 0 && change.removed.length === 0) return;
    const info = {
      members: this.members,
      added: change.added.map((s) => describeServer(s)),
      removed: change.removed.map((s) => describeServer(s)),
    };
    this.logger?.info?.(info, 'membership changed');
    this.emit('membership', info);
    publish(membershipChannel, () => ({ ...info, containerId: this.containerId }));
  }

  private onPhysicalLost(phys: PhysicalConnection, error: Error): void {
    if (phys !== this.phys) return;
    const lostAt = now();
    const from = phys.url;
    const server = this.physServer;
    this.phys = undefined;
    this.pool.disconnected();
    if (isRedirect(error)) this.pool.redirect(error.info, server);
    if (server) {
      if (isNotQuorate(error)) this.pool.notQuorate(server, lostAt);
      // a hung member still accepts TCP connections: try it last for a while
      else if (isUnresponsive(error) && this.firstByte)
        this.pool.unresponsive(
          server,
          lostAt,
          unresponsiveHoldMs(this.firstByte, this.reconnectOptions.attemptTimeoutMs),
        );
      else if (this.state !== 'closing') this.pool.failed(server, error, lostAt);
    }
    if (this.state === 'closing' || this.state === 'closed') {
      for (const link of this.links) link.onConnectionLost(error);
      this.finish(undefined);
      return;
    }
    this.logger?.warn?.({ url: from, error }, `connection to ${from} lost: ${describeCause(error)}`);
    this.emit('disconnected', { url: from, error });
    // first: the broker rolled back every open transaction, so their sends end here and are
    // neither in doubt nor replayed
    for (const tx of this.transactions) tx.lose(error);
    // every written, unsettled delivery is now in doubt
    for (const e of this.sends.connectionLost())
      this.emit('inDoubt', { messageId: e.messageId, address: e.context.sender.address });
    for (const link of this.links) link.onConnectionLost(error);
    if (!this.reconnectOptions.enabled) {
      this.terminate(error);
      return;
    }
    this.state = 'reconnecting';
    void this.reconnect(from, error, lostAt);
  }

  private async reconnect(from: string, reason: Error, lostAt: number): Promise<void> {
    let result: { phys: PhysicalConnection; server: ServerAddress<unknown> };
    try {
      result = await this.establish(false);
    } catch (e) {
      if (this.state === 'closing' || this.state === 'closed') return;
      this.terminate(e as Error);
      return;
    }
    if (this.state === 'closing' || this.state === 'closed') {
      result.phys.close();
      return;
    }
    const { reattached, resent } = this.adopt(result.phys, result.server);
    this.failovers++;
    const info: FailoverEvent = {
      from,
      to: result.phys.url,
      reason: isUnresponsive(reason) ? 'unresponsive' : reason.message,
      durationMs: Math.round(now() - lostAt),
      resent,
      reattached,
    };
    this.logger?.info?.(info, `failover ${from} -> ${info.to} in ${info.durationMs} ms`);
    this.emit('failover', info);
    publish(failoverChannel, () => ({ ...info, containerId: this.containerId }));
  }

  /** Failover gave up (or is off): every pending operation rejects with `error`. */
  private terminate(error: Error): void {
    this.closeError = error;
    this.state = 'closing';
    this.failAllLinks(error);
    if (this.listenerCount('error') > 0) this.emit('error', error);
    this.finish(error);
  }

  private finish(error: Error | undefined): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.stop.abort(error ?? new ClientError('quorate:closed', 'connection closed'));
    const waiters = this.closedWaiters;
    this.closedWaiters = [];
    for (const w of waiters) w();
    this.emit('closed', error ? { error } : {});
  }
}

function connectAbortError(reason: unknown, cause: unknown): Error {
  if (reason instanceof ClientError) return reason;
  return new ClientError('quorate:aborted', 'connect aborted', { cause: reason ?? cause });
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
