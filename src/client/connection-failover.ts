/**
 * The logical Connection's failover: one container-id, one replay journal, and a set of logical
 * links that outlive any number of physical connections. When the physical connection fails
 * (socket error, idle timeout, broker Close such as amqp:connection:forced 'not quorate'), it
 * marks written deliveries in doubt, moves to another member of the pool (p-retry: exponential,
 * randomized, limits by attempts and total time), re-attaches every link under the same names,
 * replays the journal in order, and reports each step as an event. The first connect runs the
 * same dial (start()). The public API is in connection.ts, the links in connection-links.ts.
 */
import { ClientError } from '../errors.js';
import { describeServer, type PoolChange, type ServerAddress } from '../failover/index.js';
import type { EngineEvent } from '../protocol/index.js';
import { isNotQuorate, MEMBERSHIP_ADDRESS, MEMBERSHIP_CAPABILITY } from '../wire-extensions.js';
import { connectAbortError, describeCause } from './connect-errors.js';
import { ConnectionLinks } from './connection-links.js';
import { failoverChannel, membershipChannel, publish, reconnectingChannel } from './diagnostics.js';
import { now, type PhysicalConnection, type PhysicalHandler } from './physical.js';
import { Receiver } from './receiver.js';
import { dialMembers, isRedirect, unresponsiveHoldMs } from './reconnect.js';
import type { CallOptions, FailoverEvent } from './types.js';
import { isUnresponsive } from './unresponsive.js';

/**
 * A physical connection's events, routed to the logical connection through methods every
 * connection shares: a closure per connection would be the constant call target of the optimized
 * code that calls it for every event, thrown away (V8's "weak objects" deopt) and compiled again
 * after each connection is collected.
 */
class Routing implements PhysicalHandler {
  constructor(private readonly conn: FailoverConnection) {}

  onEvent(ev: EngineEvent): void {
    this.conn.onEngineEvent(ev);
  }

  onLost(phys: PhysicalConnection, error: Error): void {
    this.conn.onPhysicalLost(phys, error);
  }
}

/** A connection that moves between physical connections; connection.ts adds the public API. */
export abstract class FailoverConnection extends ConnectionLinks {
  private membership: Receiver | undefined;
  protected readonly stop = new AbortController();
  protected failovers = 0;
  /** The last failed connection attempt's error: the cause of a connect() deadline error. */
  private lastAttemptError: Error | undefined;
  protected closedWaiters: (() => void)[] = [];
  private readonly handler: PhysicalHandler = new Routing(this);

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

  /** @internal the physical connection is gone (Routing.onLost). */
  onPhysicalLost(phys: PhysicalConnection, error: Error): void {
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

  protected finish(error: Error | undefined): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.stop.abort(error ?? new ClientError('quorate:closed', 'connection closed'));
    const waiters = this.closedWaiters;
    this.closedWaiters = [];
    for (const w of waiters) w();
    this.emit('closed', error ? { error } : {});
  }
}
