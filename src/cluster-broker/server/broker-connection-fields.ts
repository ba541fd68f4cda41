/**
 * The ground floor of BrokerConnection (broker-connection.ts): every field it is made of, in one
 * place so the object keeps one shape, and the constructor that sets up the protocol engine and
 * its driver. Split from the teardown (broker-connection-teardown.ts), the socket-facing side
 * (broker-connection-socket.ts) and the event handling (broker-connection.ts) so each file has
 * one job; a class chain, not helpers, so the per-frame paths stay plain method calls on one object.
 */
import type { AmqpErrorBody } from '../../codec/index.js';
import { EngineDriver, type EngineOutput, ProtocolConnection } from '../../protocol/index.js';
import type { ServerContext } from './context.js';
import type { LinkGone } from './dynamic-nodes.js';
import type { LinkHandler } from './link-host.js';
import { type PeerInfo, saslServerOptions } from './sasl-policy.js';
import { TransactionRegistry } from './transactions.js';

/** Where the connection's bytes go: a socket (broker-server.ts) or memory in tests. */
export interface ConnectionIo extends EngineOutput {
  /** The transport the bytes come over (source address, TLS). Absent: in process, not TLS. */
  readonly peer?: PeerInfo;
}

/** Connection capability (a de-facto standard of AMQP 1.0 brokers): senders may attach with a null target. */
const ANONYMOUS_RELAY = 'ANONYMOUS-RELAY';

export abstract class BrokerConnectionFields {
  readonly engine: ProtocolConnection;
  containerId = '';
  /** The peer's address (`host:port`), set by whoever owns the socket. */
  remote = '';
  readonly transactions = new TransactionRegistry();
  /** Live link handlers, each with what to tell a dynamic node it is attached to when it goes. */
  protected readonly handlers = new Map<LinkHandler, ((how: LinkGone) => void) | undefined>();
  /** The peer sent Close and we had not closed first: its links went away on purpose. */
  protected closedByPeer = false;
  protected closeSent = false;
  /** The SASL PLAIN user name; undefined for ANONYMOUS or no SASL (the permissions' `anonymous`). */
  user: string | undefined = undefined;
  /** Queues this connection auto-created (or is creating) by attaching to new names. */
  queuesCreated = 0;
  protected ended = false;
  /** Aborted when the connection ends: a SASL check still waiting for its turn is dropped. */
  protected readonly gone = new AbortController();
  protected readonly startedAt: number;
  /** When the reader started holding an incomplete frame (slow-partial-frame bound). */
  protected partialSince: number | undefined;
  protected closeSentAt: number | undefined;
  protected writableWaiters: (() => void)[] = [];
  protected readonly driver: EngineDriver;

  constructor(
    readonly ctx: ServerContext,
    protected readonly io: ConnectionIo,
    now: number,
    /** Set: answer the Open, then close at once with this error (limits, not serving). */
    protected refuse?: AmqpErrorBody,
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

  /** Handle engine events (broker-connection.ts). */
  abstract process(): void;
  /** Timers (broker-connection-socket.ts). */
  abstract tick(now: number): void;
  /** Runs the engine's events through the handlers (broker-connection.ts). */
  protected abstract handleEvents(): boolean;
}
