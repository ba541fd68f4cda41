/**
 * One client connection, without the socket: bytes in (`receive`), bytes out (through `io`),
 * time in (`tick`). It drives the protocol engine and turns its events into link handlers
 * (publisher / consumer / virtual). Usable in process, e.g. by a fuzzer feeding hostile bytes.
 *
 * Output is written once per turn of the event loop (setImmediate): everything the engine and
 * the backend's answers produce in one I/O phase goes out in one write.
 */
import type { AmqpErrorBody, Attach } from '../../codec/index.js';
import {
  type EngineEvent,
  type Link,
  OutgoingDelivery,
  ProtocolConnection,
  type ReceiverLink,
  type SenderLink,
} from '../../protocol/index.js';
import { ConsumerLink } from './consumer-link.js';
import type { ServerContext } from './context.js';
import type { LinkHandler, LinkHost } from './link-host.js';
import { PublisherLink } from './publisher-link.js';
import { makeAuthenticator, saslMechanisms } from './users.js';
import { VirtualLink } from './virtual-link.js';

/** Where the connection's bytes go. */
export interface ConnectionIo {
  write(chunks: Uint8Array[]): void;
  /** Bytes written and not yet sent (socket.writableLength). Absent: never congested. */
  backlog?(): number;
  /** No more output: end the socket (after what was written). */
  end(): void;
}

/** Outcomes our sources support (symbols). */
const OUTCOMES = ['amqp:accepted:list', 'amqp:rejected:list', 'amqp:released:list', 'amqp:modified:list'];
const MAX_ADDRESS_LENGTH = 1024;
/** Delivery contract 8: sources advertise modified{delivery-failed}. */
const DEFAULT_OUTCOME_STATE = { type: 'modified', deliveryFailed: true } as const;
/** How long we wait for the peer's Close after sending ours. */
const CLOSE_WAIT_MS = 2000;
/** Output backlog above which consumers pause (resumed by writable()). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

export class BrokerConnection implements LinkHost {
  readonly engine: ProtocolConnection;
  containerId = '';
  private readonly handlers = new Set<LinkHandler>();
  private flushScheduled = false;
  private ended = false;
  private readonly startedAt: number;
  /** When the reader started holding an incomplete frame (slow-partial-frame bound). */
  private partialSince: number | undefined;
  private closeSentAt: number | undefined;
  private writableWaiters: (() => void)[] = [];
  private engineTimer: NodeJS.Timeout | undefined;
  private engineTimerAt = 0;

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
    const caps = o.offeredCapabilities?.();
    if (caps && caps.length > 0) open.offeredCapabilities = caps;
    this.engine = new ProtocolConnection({
      role: 'server',
      open,
      sasl: {
        mechanisms: saslMechanisms(o.users, o.anonymous),
        authenticate: makeAuthenticator(o.users, o.anonymous),
      },
      allowNoSasl: o.anonymous,
      maxMessageSize: o.maxMessageSize,
      now,
      logger: o.logger,
      onAsyncWork: () => this.process(),
    });
  }

  get closed(): boolean {
    return this.ended;
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
    this.clearEngineTimer();
    this.releaseAll();
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
    if (this.flushScheduled || this.ended) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.handleEvents()) this.flush();
    });
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
      this.clearEngineTimer();
      this.releaseAll();
      this.io.end();
    }
  }

  // ---- internals ----

  /** Stop without waiting for the peer: flush what we have, end the socket. */
  private abort(error: AmqpErrorBody): void {
    if (this.ended) return;
    this.engine.close(error);
    this.flush();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.clearEngineTimer();
    this.releaseAll();
    this.io.end();
  }

  private releaseAll(): void {
    this.writableWaiters = [];
    const hs = [...this.handlers];
    this.handlers.clear();
    for (const h of hs) h.close();
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

  private flush(): void {
    const out = this.engine.takeOutput();
    if (out.length > 0) this.io.write(out);
    this.armEngineTimer();
  }

  /**
   * The engine's own deadline (heartbeat at half the peer's idle-time-out, our idle timeout):
   * a peer may ask for heartbeats more often than the server's shared sweep runs.
   */
  private armEngineTimer(): void {
    if (this.ended) return;
    const at = this.engine.nextDeadline();
    if (at === undefined || (this.engineTimer !== undefined && this.engineTimerAt <= at)) return;
    if (this.engineTimer !== undefined) clearTimeout(this.engineTimer);
    this.engineTimerAt = at;
    this.engineTimer = setTimeout(
      () => {
        this.engineTimer = undefined;
        this.tick(Date.now());
        if (!this.ended) this.flush();
      },
      Math.max(1, at - Date.now()),
    );
    this.engineTimer.unref();
  }

  private clearEngineTimer(): void {
    if (this.engineTimer !== undefined) clearTimeout(this.engineTimer);
    this.engineTimer = undefined;
  }

  private onEvent(ev: EngineEvent): void {
    switch (ev.type) {
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
        if (h) {
          this.handlers.delete(h);
          h.close();
        }
        return;
      }
      case 'session-end':
        for (const l of ev.session.activeLinks()) {
          const h = l.context as LinkHandler | undefined;
          if (h) {
            this.handlers.delete(h);
            h.close();
          }
        }
        return;
      case 'link-credit': {
        const h = ev.link.context;
        if (h instanceof ConsumerLink) h.onCredit();
        return;
      }
      case 'message': {
        const h = ev.link.context;
        if (h instanceof PublisherLink) h.onMessage(ev.delivery);
        return;
      }
      case 'delivery-update': {
        const d = ev.delivery;
        if (d instanceof OutgoingDelivery) {
          const h = d.link.context;
          if (h instanceof ConsumerLink) h.onUpdate(d);
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
    if (link.role === 'receiver') this.attachPublisher(link as ReceiverLink, attach);
    else this.attachConsumer(link as SenderLink, attach);
  }

  private attachPublisher(link: ReceiverLink, attach: Attach): void {
    const target = attach.target;
    if (target === undefined || 'coordinator' in target) {
      link.refuse({
        condition: 'amqp:not-implemented',
        description: target === undefined ? 'a target is required' : 'transactions are not supported',
      });
      return;
    }
    const t = target as { address?: string; dynamic?: boolean };
    const address = t.address;
    const bad = t.dynamic ? 'dynamic targets are not supported' : checkAddress(address);
    if (bad !== undefined) {
      link.refuse({ condition: t.dynamic ? 'amqp:not-implemented' : 'amqp:invalid-field', description: bad });
      return;
    }
    this.ensureQueue(link, address!, () => {
      const h = new PublisherLink(this, link, address!);
      link.context = h;
      this.handlers.add(h);
      link.accept({
        target: { address: address! },
        sndSettleMode: attach.sndSettleMode === 0 || attach.sndSettleMode === 1 ? attach.sndSettleMode : 2,
        rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
        maxMessageSize: this.ctx.opts.maxMessageSize,
      });
      h.start();
    });
  }

  private attachConsumer(link: SenderLink, attach: Attach): void {
    const source = attach.source;
    if (source === undefined) {
      link.refuse({ condition: 'amqp:invalid-field', description: 'a source is required' });
      return;
    }
    const address = source.address;
    const bad = source.dynamic ? 'dynamic sources are not supported' : checkAddress(address);
    if (bad !== undefined) {
      link.refuse({
        condition: source.dynamic ? 'amqp:not-implemented' : 'amqp:invalid-field',
        description: bad,
      });
      return;
    }
    if (hasEntries(source.filter)) {
      link.refuse({ condition: 'amqp:not-implemented', description: 'source filters are not supported' });
      return;
    }
    const virtual = this.ctx.opts.virtualSources.get(address!);
    if (virtual !== undefined) {
      const h = new VirtualLink(this, link);
      link.context = h;
      this.handlers.add(h);
      link.accept({ source: { address: address! }, sndSettleMode: 1, rcvSettleMode: 0 });
      h.start(virtual, address!);
      return;
    }
    this.ensureQueue(link, address!, () => {
      const presettled = attach.sndSettleMode === 1;
      const h = new ConsumerLink(this, link, address!, presettled);
      link.context = h;
      this.handlers.add(h);
      link.accept({
        source: {
          address: address!,
          defaultOutcome: DEFAULT_OUTCOME_STATE,
          outcomes: OUTCOMES,
          distributionMode: 'move',
        },
        sndSettleMode: presettled ? 1 : attach.sndSettleMode === 0 ? 0 : 2,
        rcvSettleMode: (attach.rcvSettleMode ?? 0) === 1 ? 1 : 0,
      });
      h.start();
    });
  }

  /** Runs `then` once `queue` exists (declaring it if allowed), or refuses the link. */
  private ensureQueue(link: Link, queue: string, then: () => void): void {
    const { backend, opts } = this.ctx;
    const proceed = (): void => {
      if (this.ended || link.state !== 'attach-received') return;
      then();
      this.scheduleFlush();
    };
    if (backend.state.hasQueue(queue)) {
      then();
      return;
    }
    if (!opts.autoCreateQueues || queue.startsWith('$')) {
      link.refuse({ condition: 'amqp:not-found', description: `no queue '${queue}'` });
      return;
    }
    backend
      .submit({ type: 'declare', leaderTime: backend.now(), queue, options: opts.queueDefaults })
      .then(proceed, (err: unknown) => {
        if (this.ended || link.state !== 'attach-received') return;
        const e = err as { condition?: unknown; description?: unknown };
        link.refuse({
          condition: typeof e.condition === 'string' ? e.condition : 'amqp:internal-error',
          description: typeof e.description === 'string' ? e.description : `cannot declare '${queue}'`,
        });
        this.scheduleFlush();
      })
      .catch((err: unknown) => this.internalError(err));
  }
}

/** A filter set with at least one entry (whatever shape the peer sent it in). */
function hasEntries(filter: unknown): boolean {
  if (filter === undefined || filter === null) return false;
  if (filter instanceof Map) return filter.size > 0;
  if (typeof filter === 'object') return Object.keys(filter).length > 0;
  return true;
}

/** Why an address cannot name a queue, or undefined when it can. */
function checkAddress(address: unknown): string | undefined {
  if (address === undefined || address === '') return 'an address is required';
  // the spec types the address `*`: a peer can send any type, and only a string names a queue
  if (typeof address !== 'string') return 'the address must be a string';
  if (address.length > MAX_ADDRESS_LENGTH) return `address longer than ${MAX_ADDRESS_LENGTH} characters`;
  return undefined;
}
