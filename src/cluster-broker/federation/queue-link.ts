/**
 * One queue federation link (docs/federation.md): upstream queue Q -> local queue Q, over
 * quorate's own client, so it fails over across the upstream's members.
 *
 * - Demand (demand.ts): upstream credit is granted only for the gap between the local consumers'
 *   unused credit and what local Q already holds for them, re-read every `pollMs` and after
 *   every move.
 * - Exactly once (docs/federation.md#exactly-once): a message is accepted upstream (rcv-settle-
 *   mode second: the upstream confirms it removed it) only after its local enqueue committed; the
 *   copy keeps its message-id and is enqueued with its dedup key, so a move re-sent after a crash
 *   of either side (the upstream redelivers what was never accepted) is absorbed as a duplicate.
 *   A message without a message-id has nothing to deduplicate by: it moves at least once.
 * - Loops (route.ts): a message whose route forbids the move is settled `modified` with
 *   undeliverable-here: it stays upstream for other consumers, never offered to this link again.
 * - An upstream whose Open reports our own cluster id is refused for good.
 */
import { encodeMessage } from '../../codec/message.js';
import type { Logger } from '../../common/logger.js';
import type { Connection, Delivery, Receiver } from '../../index.js';
import { connect } from '../../index.js';
import { CLUSTER_ID_PROPERTY } from '../../wire-extensions.js';
import type { ResolvedUpstream } from './config.js';
import { creditToGrant } from './demand.js';
import type { FederationLinkPhase, FederationLinkState } from './link-state.js';
import type { LocalQueues } from './local-queues.js';
import { routeOf, routeRefusal, withRoute } from './route.js';

/** How often demand is re-read (ms) when nothing else prompts it. */
const DEFAULT_POLL_MS = 50;

export interface QueueLinkOptions {
  upstream: ResolvedUpstream;
  queue: string;
  local: LocalQueues;
  logger: Logger;
  /** Demand re-read interval, ms. Default 50. */
  pollMs?: number;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class QueueLink {
  private phase: FederationLinkPhase = 'stopped';
  private member: string | undefined;
  private upstreamClusterId: string | undefined;
  private moved = 0;
  private duplicates = 0;
  private leftUpstream = 0;
  private lastError: string | undefined;
  /** Received from upstream, not yet settled there. */
  private moving = 0;
  private stopper: AbortController | undefined;
  private running: Promise<void> | undefined;
  private warnedNoId = false;

  constructor(private readonly o: QueueLinkOptions) {}

  get queue(): string {
    return this.o.queue;
  }

  /** Starts the link (again); a no-op while it runs. */
  start(): void {
    if (this.running !== undefined) return;
    const stopper = new AbortController();
    this.stopper = stopper;
    this.running = this.run(stopper.signal).finally(() => {
      if (this.stopper === stopper) this.running = undefined;
    });
  }

  /** Stops the link: closes its upstream connection; what was not accepted there stays there. */
  async stop(phase: FederationLinkPhase = 'stopped'): Promise<void> {
    this.stopper?.abort();
    const running = this.running;
    this.running = undefined;
    await running;
    if (!this.refused) this.setPhase(phase);
  }

  state(): FederationLinkState {
    return {
      upstream: this.o.upstream.name,
      queue: this.o.queue,
      state: this.phase,
      upstreamMember: this.member,
      upstreamClusterId: this.upstreamClusterId,
      moved: this.moved,
      duplicates: this.duplicates,
      leftUpstream: this.leftUpstream,
      lastError: this.lastError,
    };
  }

  private get refused(): boolean {
    return this.phase === 'refused';
  }

  private get where(): { upstream: string; queue: string } {
    return { upstream: this.o.upstream.name, queue: this.o.queue };
  }

  private setPhase(phase: FederationLinkPhase): void {
    if (this.phase === phase) return;
    this.phase = phase;
    this.o.logger.info?.({ ...this.where, state: phase, member: this.member }, `federation link ${phase}`);
  }

  private fail(err: unknown, what: string): void {
    this.lastError = `${what}: ${(err as Error)?.message ?? String(err)}`;
    this.o.logger.warn?.({ ...this.where, err }, `federation link: ${this.lastError}`);
  }

  /** Connects, moves while connected, reconnects after the client gave up, until stopped or refused. */
  private async run(signal: AbortSignal): Promise<void> {
    const { upstream } = this.o;
    while (!signal.aborted && !this.refused) {
      this.setPhase('connecting');
      let conn: Connection | undefined;
      try {
        conn = await connect({
          urls: upstream.urls,
          ...(upstream.username !== undefined ? { username: upstream.username } : {}),
          ...(upstream.password !== undefined ? { password: upstream.password } : {}),
          // stable: after a restart of this broker the link re-attaches under the same identity
          containerId: `quorate-federation/${this.o.local.clusterId}/${upstream.name}/${this.o.queue}`,
          reconnect: { maxDelayMs: upstream.reconnectDelayMs, maxTimeMs: 30_000 },
          signal,
        });
        await this.serve(conn, signal);
      } catch (err) {
        if (!signal.aborted) this.fail(err, 'upstream connection');
      } finally {
        this.member = undefined;
        await conn?.close().catch(() => undefined);
      }
      if (!signal.aborted && !this.refused) await pause(upstream.reconnectDelayMs, signal);
    }
  }

  /** True (and the link refused for good) when the connected upstream is our own cluster. */
  private refusesOwnCluster(conn: Connection): boolean {
    const id = conn.remoteOpen?.properties?.[CLUSTER_ID_PROPERTY];
    this.upstreamClusterId = typeof id === 'string' ? id : undefined;
    if (this.upstreamClusterId !== this.o.local.clusterId) return false;
    this.lastError = `upstream ${conn.url ?? ''} reports our own cluster id '${this.o.local.clusterId}': refusing to federate a cluster with itself`;
    this.o.logger.error?.({ ...this.where }, `federation link refused: ${this.lastError}`);
    this.setPhase('refused');
    return true;
  }

  /** One upstream connection's life: attach, move on demand, until it closes for good or stop. */
  private async serve(conn: Connection, signal: AbortSignal): Promise<void> {
    if (this.refusesOwnCluster(conn)) return;
    const closed = new Promise<void>((resolve) => {
      conn.once('closed', ({ error }) => {
        if (error !== undefined && !signal.aborted) this.fail(error, 'upstream connection closed');
        resolve();
      });
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const onConnected = (): void => {
      if (this.refusesOwnCluster(conn)) {
        conn.close().catch(() => undefined);
        return;
      }
      this.member = conn.url;
      this.setPhase('running');
    };
    conn.on('connected', onConnected);
    conn.on('disconnected', () => {
      this.member = undefined;
      if (this.phase === 'running') this.setPhase('connecting');
    });
    const receiver = await conn.openReceiver(this.o.queue, {
      name: `federation/${this.o.local.clusterId}/${this.o.queue}`,
      credit: 0,
      confirmAccept: true,
      signal,
    });
    this.member = conn.url;
    this.setPhase('running');
    const demand = (): void => this.grant(receiver);
    const timer = setInterval(demand, this.o.pollMs ?? DEFAULT_POLL_MS);
    try {
      demand();
      const receiving = (async () => {
        for await (const d of receiver) void this.move(d, receiver, conn);
      })();
      await Promise.race([closed, receiving]);
    } finally {
      clearInterval(timer);
    }
  }

  /** Tops the upstream credit up to the local demand (demand.ts), never beyond. */
  private grant(receiver: Receiver): void {
    if (receiver.state !== 'attached') return;
    const { local, queue } = this.o;
    const n = creditToGrant({
      consumerCredit: local.unusedConsumerCredit(queue),
      available: local.available(queue),
      upstreamCredit: receiver.linkCredit,
      moving: this.moving + receiver.buffered,
    });
    if (n > 0) receiver.addCredit(n);
  }

  /** One message: route check, local commit, then accept upstream (the order is the guarantee). */
  private async move(d: Delivery, receiver: Receiver, conn: Connection): Promise<void> {
    this.moving++;
    const { local, queue, upstream } = this.o;
    try {
      const m = d.message;
      const route = routeOf(m.messageAnnotations);
      const refusal = routeRefusal(route, local.clusterId, upstream.maxHops);
      if (refusal !== undefined) {
        this.leftUpstream++;
        this.o.logger.debug?.({ ...this.where, messageId: m.messageId, route }, `left upstream: ${refusal}`);
        await d.modify({ undeliverableHere: true });
        return;
      }
      if (m.messageId == null && !this.warnedNoId) {
        this.warnedNoId = true;
        this.o.logger.warn?.(
          { ...this.where },
          'a message without a message-id moved: such messages are moved at least once, not exactly once (docs/federation.md#exactly-once)',
        );
      }
      const copy = encodeMessage({
        ...m,
        // a new enqueue here: its own delivery count; delivery annotations are for one hop only
        deliveryCount: undefined,
        firstAcquirer: undefined,
        deliveryAnnotations: undefined,
        messageAnnotations: withRoute(m.messageAnnotations, route, this.upstreamClusterId ?? upstream.name),
      });
      const result = await local.enqueue(queue, copy);
      if (result.status === 'refused') {
        this.lastError = `local enqueue refused: ${result.condition} ${result.description}`;
        await d.release();
        return;
      }
      // committed here: only now may the upstream forget it
      await d.accept();
      if (result.status === 'enqueued') this.moved++;
      else this.duplicates++;
    } catch (err) {
      // the local outcome is unknown or the accept was lost: never settle on it. Dropping the
      // upstream connection hands the message back upstream; the redelivery is deduplicated here.
      this.fail(err, 'move');
      if (receiver.state !== 'closed') conn.close().catch(() => undefined);
    } finally {
      this.moving--;
      this.grant(receiver);
    }
  }
}
