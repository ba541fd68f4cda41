/**
 * The ground floor of the ServerPool (server-pool.ts): its members in selection order, which one
 * to try next, and per-member accounting (attempts, failures, the not-quorate backoff, the hold
 * of an unresponsive member). What the members are, and which learned ones to take, is
 * server-pool.ts's job; the state both need lives here.
 *
 * Selection is round-robin over a (seeded-random, by default) order. Members that closed us as
 * not quorate are skipped until their own backoff expires, then take their turn again like any
 * other (so a dead member never keeps the client from a member that became quorate meanwhile);
 * when nothing else is left, the one whose backoff ends first is returned with `notBefore`
 * (never skipped for good: the whole cluster may have lost quorum and come back).
 *
 * Plain state: no timers, no sockets; `now` is passed in (any monotonic millisecond clock).
 */

import { backoffDelay } from '../common/backoff.js';
import { type Random, randomIndex, shuffled } from '../common/random.js';
import { ArgumentTypeError } from '../errors.js';
import { strongestScheme } from './scheme-policy.js';
import { parseServerUrl, type ServerAddress, type ServerConfig } from './server-address.js';
import {
  type IgnoredMembers,
  MAX_LEARNED_MEMBERS,
  type NotQuorateBackoff,
  type ServerListAction,
  type ServerPoolOptions,
} from './server-pool-options.js';

/** Per-member reconnect accounting. */
/** Per-member reconnect accounting. */
export interface ServerStats {
  /** connection attempts handed out by next() */
  attempts: number;
  /** failures since the last successful connection */
  consecutiveFailures: number;
  lastFailureAt?: number;
  lastFailureReason?: unknown;
  /** consecutive not-quorate closes (reset by connected()) */
  notQuorateCount: number;
  /** not tried before this time (set by notQuorate(); a member list saying it is quorate clears it) */
  notQuorateUntil?: number;
  /**
   * not tried before this time (set by unresponsive()): only our own connection to it clears it,
   * since another member's list cannot know that the process runs (docs/failover.md#unresponsive)
   */
  unresponsiveUntil?: number;
  connections: number;
}

export interface NextServer<O = unknown> {
  server: ServerAddress<O>;
  /** earliest time to dial it (== now unless only backed-off not-quorate members remain) */
  notBefore: number;
}

/** Until when a member is held back (not-quorate backoff or an unresponsive hold), if at all. */
function heldUntil(stats: ServerStats): number | undefined {
  if (stats.unresponsiveUntil === undefined) return stats.notQuorateUntil;
  return Math.max(stats.unresponsiveUntil, stats.notQuorateUntil ?? 0);
}

/** Members in selection order and their accounting; ServerPool (server-pool.ts) adds what to learn. */
export class ServerRotation<O = unknown> {
  protected readonly entries = new Map<string, ServerAddress<O>>();
  protected readonly statsByKey = new Map<string, ServerStats>();
  protected order: string[] = [];
  private lastKey: string | undefined;
  private lastIndex = -1;
  protected preferredKey: string | undefined;
  protected currentKey: string | undefined;
  protected readonly random: Random;
  protected readonly randomize: boolean;
  readonly serverListAction: ServerListAction;
  private readonly nq: Required<NotQuorateBackoff>;
  protected readonly maxLearned: number;
  protected readonly onIgnored: ((ignored: IgnoredMembers) => void) | undefined;
  /** the scheme members are held to when nothing says which endpoint a list came from */
  protected readonly baselineScheme: ServerAddress<O>['scheme'];

  constructor(configured: readonly ServerConfig<O>[], options: ServerPoolOptions = {}) {
    if (configured.length === 0)
      throw new ArgumentTypeError('ERR_INVALID_ARG_VALUE', 'at least one server URL is needed');
    this.random = options.random ?? Math.random;
    this.randomize = options.randomize ?? true;
    this.serverListAction = options.serverListAction ?? 'replace';
    this.nq = {
      initialMs: options.notQuorateBackoff?.initialMs ?? 250,
      maxMs: options.notQuorateBackoff?.maxMs ?? 30_000,
      factor: options.notQuorateBackoff?.factor ?? 2,
      jitter: options.notQuorateBackoff?.jitter ?? 0.5,
    };
    this.maxLearned = options.maxLearnedMembers ?? MAX_LEARNED_MEMBERS;
    if (!Number.isInteger(this.maxLearned) || this.maxLearned < 0)
      throw new ArgumentTypeError(
        'ERR_INVALID_ARG_VALUE',
        `maxLearnedMembers must be a non-negative integer, got ${this.maxLearned}`,
      );
    this.onIgnored = options.onIgnored;
    const parsed = configured.map((c) => parseServerUrl<O>(c));
    this.baselineScheme = strongestScheme(parsed.map((p) => p.scheme))!;
    for (const s of parsed) {
      if (this.entries.has(s.key)) continue; // same host:port twice: first wins
      this.entries.set(s.key, s);
      this.statsByKey.set(s.key, newStats());
      this.order.push(s.key);
    }
    if (this.randomize) this.order = shuffled(this.order, this.random);
  }

  get size(): number {
    return this.order.length;
  }

  /** Members in selection order. */
  servers(): ServerAddress<O>[] {
    return this.order.map((k) => this.entries.get(k)!);
  }

  get(key: string): ServerAddress<O> | undefined {
    return this.entries.get(key);
  }

  stats(server: ServerAddress<O> | string): Readonly<ServerStats> | undefined {
    return this.statsByKey.get(typeof server === 'string' ? server : server.key);
  }

  /** The member we are connected to, if any. */
  get current(): ServerAddress<O> | undefined {
    return this.currentKey === undefined ? undefined : this.entries.get(this.currentKey);
  }

  /**
   * The server to try next (and count the attempt). Round-robin from the last one tried;
   * members reported or found not quorate come last.
   */
  next(now: number): NextServer<O> {
    const n = this.order.length;
    if (this.preferredKey !== undefined && this.entries.has(this.preferredKey)) {
      const key = this.preferredKey;
      this.preferredKey = undefined;
      return this.take(key, now, now);
    }
    this.preferredKey = undefined;
    const start = this.startIndex();
    // Round-robin over every member except those still backed off after a not-quorate close and
    // those the broker reports as not quorate (tried next). A member whose backoff expired is
    // an ordinary candidate again, so a dead member never keeps the client from the members that
    // regained quorum meanwhile; then the backed-off one that comes back first.
    let reportedNotQuorate: string | undefined;
    let soonest: { key: string; until: number } | undefined;
    for (let i = 0; i < n; i++) {
      const key = this.order[(start + i) % n]!;
      const until = heldUntil(this.statsByKey.get(key)!);
      if (until !== undefined && until > now) {
        if (soonest === undefined || until < soonest.until) soonest = { key, until };
        continue;
      }
      if (until === undefined && this.entries.get(key)!.quorate === false) {
        reportedNotQuorate ??= key;
        continue;
      }
      return this.take(key, now, now);
    }
    if (reportedNotQuorate !== undefined) return this.take(reportedNotQuorate, now, now);
    // only held members remain: the one that comes back first. A not-quorate backoff is waited
    // out (an election ends soon); a hold for unresponsiveness is not: that member was suspected
    // before every other one still held, so it is the likeliest to run again; dial it now
    const soonestStats = this.statsByKey.get(soonest!.key)!;
    const waitOut = (soonestStats.notQuorateUntil ?? 0) > now;
    return this.take(soonest!.key, now, waitOut ? soonest!.until : now);
  }

  /** A connection to `server` is open (and its Open accepted): reset its failure accounting. */
  connected(server: ServerAddress<O> | string): void {
    const key = typeof server === 'string' ? server : server.key;
    const stats = this.statsByKey.get(key);
    if (stats === undefined) return;
    stats.consecutiveFailures = 0;
    stats.notQuorateCount = 0;
    delete stats.notQuorateUntil;
    delete stats.unresponsiveUntil;
    stats.connections++;
    this.currentKey = key;
  }

  /** The connection to the current member is gone (whatever the reason). */
  disconnected(): void {
    this.currentKey = undefined;
  }

  /** An attempt on `server` failed, or its connection died. */
  failed(server: ServerAddress<O> | string, reason: unknown, now: number): void {
    const key = typeof server === 'string' ? server : server.key;
    if (this.currentKey === key) this.currentKey = undefined;
    const stats = this.statsByKey.get(key);
    if (stats === undefined) return;
    stats.consecutiveFailures++;
    stats.lastFailureAt = now;
    stats.lastFailureReason = reason;
  }

  /**
   * `server` closed us (or refused us) because it is not quorate: try it last, after a backoff
   * that grows with consecutive not-quorate closes. Returns the time until which it is held back.
   */
  notQuorate(server: ServerAddress<O> | string, now: number): number {
    const key = typeof server === 'string' ? server : server.key;
    this.failed(key, 'not-quorate', now);
    const stats = this.statsByKey.get(key);
    if (stats === undefined) return now;
    stats.notQuorateCount++;
    const base = backoffDelay(this.nq, stats.notQuorateCount - 1);
    const until = now + Math.round(base * (1 + this.nq.jitter * this.random()));
    stats.notQuorateUntil = until;
    return until;
  }

  /**
   * `server` stopped answering while it owed us answers (docs/failover.md#unresponsive): a hung
   * process still accepts TCP connections (the kernel does) but never answers Open, so it is
   * tried last for `holdMs`, as a not-quorate member is, instead of costing a whole attempt
   * timeout. Returns the time until which it is held back.
   */
  unresponsive(server: ServerAddress<O> | string, now: number, holdMs: number): number {
    const key = typeof server === 'string' ? server : server.key;
    this.failed(key, 'unresponsive', now);
    const stats = this.statsByKey.get(key);
    if (stats === undefined) return now;
    stats.unresponsiveUntil = Math.max(stats.unresponsiveUntil ?? 0, now + holdMs);
    return stats.unresponsiveUntil;
  }

  protected insert(r: ServerAddress<O>): void {
    this.entries.set(r.key, r);
    if (!this.statsByKey.has(r.key)) this.statsByKey.set(r.key, newStats());
    const at = this.randomize ? randomIndex(this.random, this.order.length + 1) : this.order.length;
    this.order.splice(at, 0, r.key);
    if (at <= this.lastIndex) this.lastIndex++;
  }

  protected remove(key: string): void {
    const at = this.order.indexOf(key);
    if (at >= 0) {
      this.order.splice(at, 1);
      if (at < this.lastIndex) this.lastIndex--;
    }
    this.entries.delete(key);
    this.statsByKey.delete(key);
    if (this.preferredKey === key) this.preferredKey = undefined;
  }

  private startIndex(): number {
    const n = this.order.length;
    if (this.lastKey !== undefined) {
      const i = this.order.indexOf(this.lastKey);
      if (i >= 0) return (i + 1) % n;
    }
    // last one tried was removed: continue from where it stood
    return this.lastIndex < 0 ? 0 : this.lastIndex % n;
  }

  private take(key: string, now: number, notBefore: number): NextServer<O> {
    this.lastKey = key;
    this.lastIndex = this.order.indexOf(key);
    this.statsByKey.get(key)!.attempts++;
    return { server: this.entries.get(key)!, notBefore: Math.max(now, notBefore) };
  }
}

function newStats(): ServerStats {
  return { attempts: 0, consecutiveFailures: 0, notQuorateCount: 0, connections: 0 };
}
