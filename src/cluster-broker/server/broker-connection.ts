/**
 * One client connection, without the socket: bytes in (`receive`), bytes out (through `io`),
 * time in (`tick`). It drives the protocol engine and turns its events into link handlers
 * (publisher / consumer / virtual). Usable in process, e.g. by a fuzzer feeding hostile bytes.
 *
 * It runs the shared adapter loop (protocol/engine-driver.ts) with output written once per turn
 * of the event loop (setImmediate): everything the engine and the backend's answers produce in
 * one I/O phase goes out in one write; a timer follows the engine's own deadline.
 */
import type { AmqpErrorBody, Attach } from '../../codec/index.js';
import {
  EngineDriver,
  type EngineEvent,
  type EngineOutput,
  type Link,
  OutgoingDelivery,
  ProtocolConnection,
  type ReceiverLink,
  type SenderLink,
} from '../../protocol/index.js';
import { attachConsumer, attachPublisher } from './attach.js';
import { BrowserLink } from './browser-link.js';
import { ConsumerLink } from './consumer-link.js';
import type { ServerContext } from './context.js';
import type { LinkGone } from './dynamic-nodes.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { ManagementRequestLink } from './management-node.js';
import { PublisherLink } from './publisher-link.js';
import { type PeerInfo, saslServerOptions } from './sasl-policy.js';
import { CoordinatorLink, TransactionRegistry } from './transactions.js';

/** Where the connection's bytes go: a socket (broker-server.ts) or memory in tests. */
export interface ConnectionIo extends EngineOutput {
  /** The transport the bytes come over (source address, TLS). Absent: in process, not TLS. */
  readonly peer?: PeerInfo;
}

/** Connection capability (a de-facto standard of AMQP 1.0 brokers): senders may attach with a null target. */
const ANONYMOUS_RELAY = 'ANONYMOUS-RELAY';
/** How long we wait for the peer's Close after sending ours. */
const CLOSE_WAIT_MS = 2000;
/** Output backlog above which consumers pause (resumed by writable()). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** One connection as the monitoring endpoints show it (`GET /api/connections`). */
export interface ConnectionInfo {
  /** The peer's address, `host:port`. */
  remote: string;
  /** From its Open ('' until then). */
  containerId: string;
  /** The SASL PLAIN user; null for ANONYMOUS or no SASL. */
  user: string | null;
  /** Sessions open on the connection. */
  sessions: number;
  /** Links attached across its sessions. */
  links: number;
  /** When the socket was accepted (ISO 8601). */
  openedAt: string;
}

export class BrokerConnection implements LinkHost {
  readonly engine: ProtocolConnection;
  containerId = '';
  /** The peer's address (`host:port`), set by whoever owns the socket. */
  remote = '';
  readonly transactions = new TransactionRegistry();
  /** Live link handlers, each with what to tell a dynamic node it is attached to when it goes. */
  private readonly handlers = new Map<LinkHandler, ((how: LinkGone) => void) | undefined>();
  /** The peer sent Close and we had not closed first: its links went away on purpose. */
  private closedByPeer = false;
  private closeSent = false;
  /** The SASL PLAIN user name; undefined for ANONYMOUS or no SASL (the permissions' `anonymous`). */
  user: string | undefined = undefined;
  /** Queues this connection auto-created (or is creating) by attaching to new names. */
  queuesCreated = 0;
  private ended = false;
  /** Aborted when the connection ends: a SASL check still waiting for its turn is dropped. */
  private readonly gone = new AbortController();
  private readonly startedAt: number;
  /** When the reader started holding an incomplete frame (slow-partial-frame bound). */
  private partialSince: number | undefined;
  private closeSentAt: number | undefined;
  private writableWaiters: (() => void)[] = [];
  private readonly driver: EngineDriver;

  constructor(
    readonly ctx: ServerContext,
    private readonly io: ConnectionIo,
    now: number,
    /** Set: answer the Open, then close at once with this error (limits, not serving). */
    private refuse?: AmqpErrorBody,
  ) {
    const o = ctx.opts;
    this.startedAt = now;
    const open: ConstructorParameters<typeof ProtocolConnection>[0]['open'] = {
      containerId: o.containerId,
      maxFrameSize: o.maxFrameSize,
      channelMax: o.channelMax,
    };
    if (o.idleTimeoutMs > 0) open.idleTimeOut = o.idleTimeoutMs;
    const props = o.openProperties?.();
    if (props) open.properties = props;
    // a sender with a null target relays each message to the queue its `to` names (attach.ts)
    open.offeredCapabilities = [ANONYMOUS_RELAY, ...(o.offeredCapabilities?.() ?? [])];
    this.engine = new ProtocolConnection({
      role: 'server',
      open,
      sasl: saslServerOptions(
        {
          checker: o.passwords,
          anonymous: o.anonymous,
          requireTlsForPlain: o.requireTlsForPlain,
          throttle: o.throttle,
          logger: o.logger,
        },
        io.peer ?? { address: '', tls: false },
        this.gone.signal,
      ),
      allowNoSasl: o.anonymous,
      maxMessageSize: o.maxMessageSize,
      now,
      logger: o.logger,
      onAsyncWork: () => this.process(),
    });
    // The engine's own deadline (heartbeat at half the peer's idle-time-out, our idle timeout) has
    // its timer here: a peer may ask for heartbeats more often than the server's shared sweep runs.
    this.driver = new EngineDriver(
      this.engine,
      io,
      { onDeadline: (at) => this.tick(at), beforeFlush: () => this.handleEvents() },
      { clock: Date.now, batch: 'turn' },
    );
  }

  get closed(): boolean {
    return this.ended;
  }

  info(): ConnectionInfo {
    let links = 0;
    const sessions = this.engine.activeSessions();
    for (const s of sessions) links += s.activeLinks().length;
    return {
      remote: this.remote,
      containerId: this.containerId,
      user: this.user ?? null,
      sessions: sessions.length,
      links,
      openedAt: new Date(this.startedAt).toISOString(),
    };
  }

  /** Bytes from the socket. */
  receive(chunk: Uint8Array, now: number): void {
    if (this.ended) return;
    try {
      this.engine.receive(chunk, now);
      this.trackPartial(now);
      this.process();
    } catch (err) {
      // never let one connection's input take the process down
      this.internalError(err);
    }
  }

  /** Timers: heartbeats, idle timeout, handshake deadline, slow partial frames. */
  tick(now: number): void {
    if (this.ended) return;
    try {
      this.tickUnguarded(now);
    } catch (err) {
      this.internalError(err);
    }
  }

  private tickUnguarded(now: number): void {
    const o = this.ctx.opts;
    const state = this.engine.state;
    if (state !== 'open' && state !== 'close-sent' && now - this.startedAt > o.handshakeTimeoutMs) {
      this.abort({
        condition: 'amqp:resource-limit-exceeded',
        description: `no Open within ${o.handshakeTimeoutMs} ms`,
      });
      return;
    }
    if (this.partialSince !== undefined && o.idleTimeoutMs > 0 && now - this.partialSince > o.idleTimeoutMs) {
      this.abort({
        condition: 'amqp:resource-limit-exceeded',
        description: `incomplete frame for more than ${o.idleTimeoutMs} ms`,
      });
      return;
    }
    if (state === 'close-sent') {
      if (this.closeSentAt === undefined) this.closeSentAt = now;
      else if (now - this.closeSentAt > CLOSE_WAIT_MS) {
        this.flush();
        this.finish();
        return;
      }
    }
    this.engine.tick(now);
    this.process();
  }

  /** Close with an error (not serving, shutdown). */
  close(error: AmqpErrorBody): void {
    if (this.ended) return;
    if (this.engine.state === 'open' || this.engine.state === 'opening') {
      this.closeSent = true;
      this.engine.close(error);
      this.process();
      this.flush();
      this.finish();
    } else {
      this.abort(error);
    }
  }

  /** The socket is gone (peer reset, our end): release everything. */
  socketClosed(): void {
    if (this.ended) return;
    this.ended = true;
    this.gone.abort();
    this.driver.stop();
    this.releaseAll('lost');
  }

  /** The socket drained its output: resume consumers that paused on congestion. */
  writable(): void {
    if (this.writableWaiters.length === 0 || this.congested) return;
    const w = this.writableWaiters;
    this.writableWaiters = [];
    for (const f of w) f();
  }

  // ---- LinkHost ----

  get congested(): boolean {
    return (this.io.backlog?.() ?? 0) > HIGH_WATER_BYTES;
  }

  whenWritable(resume: () => void): void {
    this.writableWaiters.push(resume);
  }

  scheduleFlush(): void {
    if (!this.ended) this.driver.scheduleFlush();
  }

  fail(cause: unknown): void {
    const description =
      cause instanceof Error && 'description' in cause && typeof cause.description === 'string'
        ? cause.description
        : `outcome unknown: ${String(cause)}`;
    this.ctx.opts.logger.warn?.(
      { containerId: this.containerId, err: cause },
      'closing connection: outcome unknown',
    );
    this.close({ condition: 'amqp:connection:forced', description });
  }

  internalError(err: unknown): void {
    this.ctx.opts.logger.error?.({ err, containerId: this.containerId }, 'connection handler failed');
    try {
      this.abort({ condition: 'amqp:internal-error', description: 'internal error' });
    } catch {
      // the engine itself is in trouble: drop the socket without a Close
      this.ended = true;
      this.gone.abort();
      this.driver.stop();
      this.releaseAll('lost');
      this.io.end();
    }
  }

  // ---- internals ----

  /** Stop without waiting for the peer: flush what we have, end the socket. */
  private abort(error: AmqpErrorBody): void {
    if (this.ended) return;
    this.closeSent = true;
    this.engine.close(error);
    this.flush();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.gone.abort();
    this.driver.stop();
    // a Close the client sent first ends its links on purpose; anything else may be a failover
    this.releaseAll(this.closedByPeer && !this.closeSent ? 'closed' : 'lost');
    this.io.end();
  }

  private releaseAll(how: LinkGone): void {
    this.writableWaiters = [];
    const hs = [...this.handlers];
    this.handlers.clear();
    for (const [h, gone] of hs) {
      h.close();
      gone?.(how);
    }
    // undischarged transactions roll back (their acquisitions were released with their links)
    this.transactions.rollbackAll();
  }

  /** A link went away: its handler releases what it holds; a dynamic node learns how. */
  private dropHandler(h: LinkHandler, how: LinkGone): void {
    const gone = this.handlers.get(h);
    if (!this.handlers.delete(h)) {
      h.close();
      return;
    }
    h.close();
    gone?.(how);
  }

  private trackPartial(now: number): void {
    // The engine does not expose its reader; reading its buffered count is the only way to bound
    // a peer that dribbles a frame byte by byte (each byte resets the idle timer).
    const reader = (this.engine as unknown as { reader?: { buffered?: number } }).reader;
    const buffered = reader?.buffered ?? 0;
    if (buffered === 0) this.partialSince = undefined;
    else if (this.partialSince === undefined) this.partialSince = now;
  }

  /** Handle engine events; the output is written at the end of this turn (scheduleFlush). */
  process(): void {
    // Written at the end of this turn, not now: the backend's answers to what these events
    // submitted (acquires for new credit) resolve first, so a drain is answered with the
    // messages that were available rather than by an immediate "drained, nothing".
    if (this.handleEvents() && this.engine.hasPending) this.scheduleFlush();
  }

  /** Runs the engine's events through the handlers; false once the connection ended. */
  private handleEvents(): boolean {
    if (this.ended) return false;
    for (;;) {
      const events = this.engine.pollEvents();
      if (events.length === 0) break;
      for (const ev of events) {
        try {
          this.onEvent(ev);
        } catch (err) {
          // a bug in a handler must not take the broker down: this connection goes, others stay
          this.ctx.opts.logger.error?.({ err, event: ev.type }, 'connection handler failed');
          this.abort({ condition: 'amqp:internal-error', description: 'internal error' });
          return false;
        }
        if (this.ended) return false;
      }
    }
    if (this.engine.state === 'closed') {
      this.flush();
      this.finish();
      return false;
    }
    return true;
  }

  /** Write the engine's output now (ending the socket once the engine closed). */
  private flush(): void {
    this.driver.flush();
  }

  private onEvent(ev: EngineEvent): void {
    switch (ev.type) {
      case 'sasl-outcome':
        if (ev.ok && ev.mechanism === 'PLAIN') this.user = ev.identity?.username;
        return;
      case 'remote-open':
        this.containerId = ev.open.containerId;
        if (this.refuse === undefined && !this.ctx.backend.serving) {
          this.refuse = {
            condition: 'amqp:connection:forced',
            description: this.ctx.backend.notServingReason ?? 'not serving',
          };
        }
        if (this.refuse !== undefined) {
          this.engine.close(this.refuse);
        }
        return;
      case 'protocol-error':
        this.ctx.counters.protocolErrors++;
        this.ctx.opts.logger.debug?.(
          { containerId: this.containerId, scope: ev.scope, error: ev.error },
          'protocol error',
        );
        return;
      case 'attach-request':
        this.onAttach(ev.link, ev.attach);
        return;
      case 'link-detached':
      case 'link-attached': {
        if (ev.type === 'link-attached') return;
        const h = ev.link.context as LinkHandler | undefined;
        // detach with closed=false suspends the link: its owner may come back (a temporary queue
        // waits for it); closed=true also ends a durable subscription, unless it answers a closing
        // detach of ours (a stolen link, or a link error of ours): no decision of the client's, so
        // a loss like any other (after a steal the successor holds what the link held)
        if (h) this.dropHandler(h, ev.closed && ev.byPeer ? 'detached' : 'lost');
        return;
      }
      case 'session-end':
        for (const l of ev.session.activeLinks()) {
          const h = l.context as LinkHandler | undefined;
          if (h) this.dropHandler(h, 'closed');
        }
        return;
      case 'remote-close':
        this.closedByPeer = true;
        return;
      case 'link-credit': {
        const h = ev.link.context;
        if (h instanceof ConsumerLink || h instanceof BrowserLink) h.onCredit();
        return;
      }
      case 'message': {
        const h = ev.link.context;
        if (h instanceof PublisherLink || h instanceof CoordinatorLink || h instanceof ManagementRequestLink)
          h.onMessage(ev.delivery);
        return;
      }
      case 'delivery-update': {
        const d = ev.delivery;
        if (d instanceof OutgoingDelivery) {
          const h = d.link.context;
          if (h instanceof ConsumerLink || h instanceof BrowserLink) h.onUpdate(d);
        }
        return;
      }
      case 'closed':
        this.flush();
        this.finish();
        return;
      default:
        return;
    }
  }

  private onAttach(link: Link, attach: Attach): void {
    if (this.refuse !== undefined) {
      link.refuse({ condition: 'amqp:connection:forced', description: this.refuse.description ?? 'closing' });
      return;
    }
    const o = this.ctx.opts;
    if (this.handlers.size >= o.maxLinksPerConnection) {
      link.refuse({
        condition: 'amqp:resource-limit-exceeded',
        description: `too many links on this connection (limit ${o.maxLinksPerConnection})`,
      });
      return;
    }
    if (link.role === 'receiver') attachPublisher(this, link as ReceiverLink, attach);
    else attachConsumer(this, link as SenderLink, attach);
  }

  /**
   * @internal a link handler was created (attach.ts): it is closed with the connection. `gone`:
   * the link is attached to a dynamic node, told how the link went.
   */
  addHandler(h: LinkHandler, gone?: (how: LinkGone) => void): void {
    this.handlers.set(h, gone);
  }
}
