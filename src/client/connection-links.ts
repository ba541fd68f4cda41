/**
 * The ground floor of the logical Connection (connection.ts): what it is made of (container-id,
 * send buffer, pool, the current physical connection) and its set of logical links: registering
 * and attaching them, routing the engine's events to them, failing them all. Split from the
 * failover (connection-failover.ts) and the public API (connection.ts) so each file has one job;
 * a class, not helpers, so the per-message paths (kick, event routing) stay plain method calls.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { ClientError } from '../errors.js';
import {
  describeServer,
  HeaderDeadline,
  type ReplayJournal,
  type ServerAddress,
  ServerPool,
} from '../failover/index.js';
import type { EngineEvent } from '../protocol/index.js';
import type { ConnectionState } from './api.js';
import { checkConnectOptions } from './connect-options.js';
import type { MemoryBounds } from './connection.js';
import { loggerFromEnv } from './env-logger.js';
import type { ClientLink } from './link-base.js';
import type { PhysicalConnection } from './physical.js';
import { type ResolvedReconnect, resolveReconnect } from './reconnect.js';
import { type PendingSend, SendBuffer, type SendWaiter } from './send-buffer.js';
import type { Transaction } from './transaction.js';
import type { CallOptions, ConnectionEvents, ConnectOptions, Logger } from './types.js';
import { headerDeadlineOptions, unresponsiveFloorMs } from './unresponsive.js';

/** The links and parts of a logical connection; the failover (connection-failover.ts) builds on it. */
export abstract class ConnectionLinks extends EventEmitter<ConnectionEvents> {
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
  protected readonly options: ConnectOptions;
  protected readonly reconnectOptions: ResolvedReconnect;
  protected readonly pool: ServerPool<unknown>;
  /** How soon members send their first byte: a failover's dial deadline (off with the suspicion). */
  protected readonly firstByte: HeaderDeadline | undefined;
  protected phys: PhysicalConnection | undefined;
  protected physServer: ServerAddress<unknown> | undefined;
  protected readonly links = new Set<ClientLink>();
  protected closeError: Error | undefined;

  /**
   * @internal use connect(). `bounds`: other defaults for the replay buffer and the receivers'
   * dedup windows (the browser build's, docs/websocket.md#browser-memory); absent: the documented ones.
   */
  constructor(
    options: ConnectOptions,
    protected readonly bounds?: MemoryBounds,
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
    this.sends = new SendBuffer({ ...options, bufferLimit }, this);
  }

  /** @internal SendGate: why new sends are refused, if they are. */
  sendRefusal(): Error | undefined {
    return this.closeError || this.state === 'closing' || this.state === 'closed'
      ? (this.closeError ?? new ClientError('quorate:closed', 'connection closed'))
      : undefined;
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

  /** The broker's Open properties and capabilities on the current connection. */
  get remoteOpen(): PhysicalConnection['remoteOpen'] {
    return this.phys?.remoteOpen;
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
  protected async attached<L extends ClientLink & { whenAttached(o: CallOptions): Promise<void> }>(
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

  protected register(link: ClientLink): void {
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

  protected assertUsable(): void {
    if (this.state === 'closing' || this.state === 'closed') {
      throw this.closeError ?? new ClientError('quorate:closed', 'connection closed');
    }
  }

  protected failAllLinks(error: Error): void {
    for (const tx of this.transactions) tx.lose(error);
    for (const link of [...this.links]) link.fail(error);
    this.links.clear();
    // anything left (waiting for room, or of senders already gone) fails too
    this.sends.failAll(error);
  }

  /** @internal a physical connection's event (the failover connection routes them here). */
  onEngineEvent(ev: EngineEvent): void {
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
}
