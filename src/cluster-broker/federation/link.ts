/**
 * One federation link (docs/federation.md): an upstream address -> the local one of the same
 * name, over quorate's own client, so it fails over across the upstream's members. What differs
 * between a queue link and a topic link (how it attaches upstream, how much credit it wants, how
 * it commits here) is its LinkKind (queue-link.ts, topic-link.ts); the rest lives here once:
 *
 * - the connection's life: connect, serve, reconnect after the client gave up, until stopped;
 * - credit: the kind says how much to grant given what is outstanding (granted and unused, plus
 *   received and not yet settled upstream, or for a queue link not yet committed here), re-read
 *   when the kind says demand freed up here, after every local commit and after every move, and
 *   every `pollMs` as a fallback, in chunks (MIN_CREDIT_CHUNK);
 * - each delivery moved by move.ts (route check, local commit, then accept upstream), taken from
 *   the receiver a batch at a time (a burst split over several reads of one turn taken as one,
 *   upstream-client.ts receiveBatch) so that a batch's local commits share one append round, the
 *   accepts sent in batches (accept-batch.ts) with the credit top-up in the same frame;
 * - an upstream whose Open reports our own cluster id is refused for good.
 */
import type { Logger } from '../../common/logger.js';
import { CLUSTER_ID_PROPERTY } from '../../wire-extensions.js';
import type { EnqueueResult } from '../core/results.js';
import { AcceptBatches } from './accept-batch.js';
import type { ResolvedUpstream } from './config.js';
import type { FederationLinkKind, FederationLinkPhase, FederationLinkState } from './link-state.js';
import type { LocalQueues } from './local-queues.js';
import { moveDelivery } from './move.js';
import type { Connection, Delivery, Receiver } from './upstream-client.js';
import { connect, receiveBatch } from './upstream-client.js';

/**
 * How often credit is re-read (ms) when nothing else prompts it: a fallback (demand reported by
 * other cluster members' status messages), freed local demand is heard of at once (watchDemand).
 */
const DEFAULT_POLL_MS = 50;
/**
 * Deliveries a link leaves unsettled upstream at most (credit included), whatever its kind asks
 * for: accepts wait for a commit upstream, and this keeps them from piling up there when the
 * upstream commits more slowly than we do.
 */
const MAX_UNSETTLED_UPSTREAM = 1000;
/**
 * Less credit than this is not granted while the upstream still has some of ours to use: every
 * flow makes the upstream acquire (a log entry and an append round there), so credit goes in
 * chunks, not one message at a time as moves complete. With none left upstream any amount is
 * granted, so a small demand is still met at once.
 */
const MIN_CREDIT_CHUNK = 32;
/** How long a delivery whose local commit was refused is held before it goes back upstream (ms). */
const REFUSED_BACKOFF_MS = 1000;

/** What makes a link a queue link or a topic link. */
export interface LinkKind {
  readonly kind: FederationLinkKind;
  /** The queue or topic, upstream and here. */
  readonly address: string;
  /** Attaches the upstream receiver (credit 0, rcv-settle-mode second) under a stable name. */
  open(conn: Connection, signal: AbortSignal): Promise<Receiver>;
  /**
   * What `outstanding` counts besides the upstream's unused credit and our buffer: deliveries not
   * yet settled upstream, or only those not yet committed here (a queue link: once committed, a
   * moved message is counted by the local queue's demand itself).
   */
  readonly outstandingUntil: 'settled' | 'committed';
  /**
   * Calls `listener` when what `creditToGrant` reads may have grown (a queue link: local demand
   * freed), so credit follows it at once, not at the next poll; returns the way to stop.
   */
  watchDemand?(listener: () => void): () => void;
  /** More upstream credit to grant now, given `outstanding` (0: none). */
  creditToGrant(outstanding: number): number;
  /** Commits an encoded copy here; resolves at the commit point. */
  commit(copy: Uint8Array): Promise<EnqueueResult>;
  /** Settles a delivery whose route forbids the move. */
  leave(d: Delivery): Promise<void>;
}

export interface LinkOptions {
  upstream: ResolvedUpstream;
  local: LocalQueues;
  logger: Logger;
  /** Credit re-read interval, ms. Default 50. */
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

export class FederationLink {
  private phase: FederationLinkPhase = 'stopped';
  private member: string | undefined;
  private upstreamClusterId: string | undefined;
  private moved = 0;
  private duplicates = 0;
  private leftUpstream = 0;
  private lastError: string | undefined;
  /** Received from upstream, not yet settled there. */
  private moving = 0;
  /** Received from upstream, local commit not resolved yet (a part of `moving`). */
  private committing = 0;
  private stopper: AbortController | undefined;
  private running: Promise<void> | undefined;
  private warnedNoId = false;

  constructor(
    private readonly o: LinkOptions,
    private readonly k: LinkKind,
  ) {}

  get kind(): FederationLinkKind {
    return this.k.kind;
  }

  get address(): string {
    return this.k.address;
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
      kind: this.k.kind,
      queue: this.k.address,
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

  private get where(): { upstream: string; kind: FederationLinkKind; queue: string } {
    return { upstream: this.o.upstream.name, kind: this.k.kind, queue: this.k.address };
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
          // stable (ours, the upstream's name, the address; whichever member runs the link): after
          // a restart or a takeover the link re-attaches under the same identity, and a topic
          // link finds its durable subscription again
          containerId: `quorate-federation/${this.o.local.clusterId}/${upstream.name}/${this.k.address}`,
          reconnect: { maxDelayMs: upstream.reconnectDelayMs, maxTimeMs: 30_000 },
          // the client's warnings (a lost upstream, members of the upstream's list it will not
          // dial: docs/security.md#client-credentials-and-learned-members) go to our log
          logger: {
            warn: (obj, msg) =>
              this.o.logger.warn?.(obj, `federation upstream '${upstream.name}': ${msg ?? ''}`),
          },
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

  /** One upstream connection's life: attach, move while credit allows, until it closes for good or stop. */
  private async serve(conn: Connection, signal: AbortSignal): Promise<void> {
    if (this.refusesOwnCluster(conn)) return;
    const closed = new Promise<void>((resolve) => {
      conn.once('closed', ({ error }) => {
        if (error !== undefined && !signal.aborted) this.fail(error, 'upstream connection closed');
        resolve();
      });
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const running = (): void => {
      this.member = conn.url;
      this.setPhase('running');
    };
    // after a failover: another upstream member, which must not be our own cluster either
    conn.on('connected', () => {
      if (!this.refusesOwnCluster(conn)) running();
      else conn.close().catch(() => undefined);
    });
    conn.on('disconnected', () => {
      this.member = undefined;
      if (this.phase === 'running') this.setPhase('connecting');
    });
    const receiver = await this.k.open(conn, signal);
    running();
    const grant = (): void => this.grant(receiver);
    // per connection: accepts waiting on a lost one fail with it (the redelivery is deduplicated)
    const accepts = new AcceptBatches(grant);
    const timer = setInterval(grant, this.o.pollMs ?? DEFAULT_POLL_MS);
    const unwatch = this.k.watchDemand?.(grant);
    try {
      grant();
      const receiving = (async () => {
        // a batch at a time, every move of it started in one turn (upstream-client.ts receiveBatch)
        for (;;) {
          const batch = await receiveBatch(receiver, MAX_UNSETTLED_UPSTREAM);
          if (batch === undefined) return;
          for (const d of batch) void this.move(d, receiver, conn, accepts, signal);
        }
      })();
      await Promise.race([closed, receiving]);
    } finally {
      clearInterval(timer);
      unwatch?.();
    }
  }

  /** Tops the upstream credit up to what the kind asks for, never beyond. */
  private grant(receiver: Receiver): void {
    if (receiver.state !== 'attached') return;
    const upstream = receiver.linkCredit + receiver.buffered;
    const outstanding = upstream + (this.k.outstandingUntil === 'committed' ? this.committing : this.moving);
    const n = Math.min(this.k.creditToGrant(outstanding), MAX_UNSETTLED_UPSTREAM - upstream - this.moving);
    if (n > 0 && (n >= MIN_CREDIT_CHUNK || upstream === 0)) receiver.addCredit(n);
  }

  /** One delivery (move.ts), counted. */
  private async move(
    d: Delivery,
    receiver: Receiver,
    conn: Connection,
    accepts: AcceptBatches,
    signal: AbortSignal,
  ): Promise<void> {
    this.moving++;
    this.committing++;
    // once per delivery: at its local commit, or at the end when it never reached one
    let awaitingCommit = true;
    const committed = (): void => {
      if (!awaitingCommit) return;
      awaitingCommit = false;
      this.committing--;
    };
    const { upstream, local } = this.o;
    try {
      const outcome = await moveDelivery(d, {
        localClusterId: local.clusterId,
        fromClusterId: this.upstreamClusterId ?? upstream.name,
        maxHops: upstream.maxHops,
        commit: (copy) =>
          this.k.commit(copy).finally(() => {
            committed();
            this.grant(receiver);
          }),
        leave: (x) => this.k.leave(x),
        accept: (x) => accepts.accept(x),
        backoff: () => pause(REFUSED_BACKOFF_MS, signal),
      });
      if (outcome.kind === 'moved' && d.message.messageId == null && !this.warnedNoId) {
        this.warnedNoId = true;
        this.o.logger.warn?.(
          { ...this.where },
          'a message without a message-id moved: such messages are moved at least once, not exactly once (docs/federation.md#exactly-once)',
        );
      }
      if (outcome.kind === 'moved') this.moved++;
      else if (outcome.kind === 'duplicate') this.duplicates++;
      else if (outcome.kind === 'refused') {
        // once per new reason: a full local queue refuses every move until it drains
        if (this.lastError !== outcome.reason)
          this.o.logger.warn?.({ ...this.where }, `federation link: ${outcome.reason}`);
        this.lastError = outcome.reason;
      } else {
        this.leftUpstream++;
        this.o.logger.debug?.(
          { ...this.where, messageId: d.message.messageId, route: outcome.route },
          `left upstream: ${outcome.refusal}`,
        );
      }
    } catch (err) {
      // the local outcome is unknown or the accept was lost: never settle on it. Dropping the
      // upstream connection hands the message back upstream; the redelivery is deduplicated here.
      this.fail(err, 'move');
      if (receiver.state !== 'closed') conn.close().catch(() => undefined);
    } finally {
      committed();
      this.moving--;
      this.grant(receiver);
    }
  }
}
