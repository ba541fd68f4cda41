/**
 * The server pool: which members exist, and which one to try next.
 *
 * Members come from the configured URLs, from the Open frame's `failover-server-list` and from
 * the `$cluster/membership` feed; every update reports `{ added, removed }`. Update policy as in
 * Qpid JMS (`amqpOpenServerListAction`): an absent key or an empty list leaves the pool alone;
 * 'replace' (default) makes the pool the broker's list plus the server we are connected to;
 * 'add' merges; 'ignore' drops updates. Learned members inherit credentials and per-endpoint
 * options from the member they were learned through, so a learned member is taken only with a
 * scheme at least as safe as that member's (scheme-policy.ts: never amqps -> amqp), and at most
 * `maxLearnedMembers` of them are kept (docs/security.md#client-credentials-and-learned-members).
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
import {
  failoverListFromOpenProperties,
  isWebSocketScheme,
  type MemberInfo,
  parseMember,
  parseMemberList,
} from '../wire-extensions.js';
import { endpointFor, type FollowVerdict, followVerdict, strongestScheme } from './scheme-policy.js';
import {
  DEFAULT_PORTS,
  describeServer,
  parseServerUrl,
  type ServerAddress,
  type ServerConfig,
  type ServerSource,
  serverKey,
} from './server-address.js';

export type ServerListAction = 'replace' | 'add' | 'ignore';

/**
 * Default cap on the members a pool keeps besides the configured ones (learned and redirect
 * targets together). A real cluster lists a handful; a longer list is a broken or hostile server,
 * and every entry is a host the client would dial with its credentials.
 */
export const MAX_LEARNED_MEMBERS = 64;

/** Members a broker told us about that the pool did not take, reported once per update. */
export interface IgnoredMembers {
  /**
   * `weaker-scheme`: a scheme of a weaker security class than the endpoint they were learned
   * through (e.g. amqp:// from an amqps:// member); `other-transport`: TCP members learned over
   * WebSocket (a member that lists no `ws`/`wss` URL) or the reverse; `over-cap`: beyond
   * `maxLearnedMembers`.
   */
  reason: 'weaker-scheme' | 'other-transport' | 'over-cap';
  /** how many were not taken */
  count: number;
  /** the first few of them, as URLs without credentials */
  examples: string[];
  /** the endpoint they were learned through, when known (URL without the password) */
  via?: string;
}

const IGNORED_EXAMPLES = 3;

export interface NotQuorateBackoff {
  /**
   * first backoff after a not-quorate close (ms), default 250: a member says so mostly while an
   * election is under way, which takes tens of ms once the leader's death is seen (a longer hold
   * left the client dialling a dead member while the live ones were held back); consecutive
   * closes double it (a cluster that lost its quorum)
   */
  initialMs?: number;
  /** cap (ms), default 30000 */
  maxMs?: number;
  /** growth per consecutive not-quorate close, default 2 */
  factor?: number;
  /** extra random fraction in [0, jitter), default 0.5 */
  jitter?: number;
}

export interface ServerPoolOptions {
  /** shuffle configured and learned members (seeded by `random`), default true */
  randomize?: boolean;
  /** [0, 1) generator; default Math.random. Pass a seeded one for reproducible order. */
  random?: Random;
  /** what a non-empty broker list does to the pool, default 'replace' */
  serverListAction?: ServerListAction;
  notQuorateBackoff?: NotQuorateBackoff;
  /** most members kept besides the configured ones, default MAX_LEARNED_MEMBERS */
  maxLearnedMembers?: number;
  /** told about every update's members the pool did not take (for a warning in the log) */
  onIgnored?: (ignored: IgnoredMembers) => void;
}

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

export interface PoolChange<O = unknown> {
  added: ServerAddress<O>[];
  removed: ServerAddress<O>[];
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

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class ServerPool<O = unknown> {
  private readonly entries = new Map<string, ServerAddress<O>>();
  private readonly statsByKey = new Map<string, ServerStats>();
  private order: string[] = [];
  private lastKey: string | undefined;
  private lastIndex = -1;
  private preferredKey: string | undefined;
  private currentKey: string | undefined;
  private readonly random: Random;
  private readonly randomize: boolean;
  readonly serverListAction: ServerListAction;
  private readonly nq: Required<NotQuorateBackoff>;
  private readonly maxLearned: number;
  private readonly onIgnored: ((ignored: IgnoredMembers) => void) | undefined;
  /** the scheme members are held to when nothing says which endpoint a list came from */
  private readonly baselineScheme: ServerAddress<O>['scheme'];

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

  /** Apply an Open frame's `properties` (looks for `failover-server-list`). */
  applyOpenProperties(properties: unknown, via?: ServerAddress<O> | string): PoolChange<O> {
    const parsed = failoverListFromOpenProperties(properties);
    return this.applyMembers(parsed?.members, via);
  }

  /** Apply a membership list (a decoded `failover-server-list` value or `$cluster/membership` body). */
  applyMemberList(value: unknown, via?: ServerAddress<O> | string): PoolChange<O> {
    return this.applyMembers(parseMemberList(value)?.members, via);
  }

  /**
   * An `amqp:connection:redirect` error's `info` map: add the target (if new) and make it the
   * next server returned by next(). Returns it, or undefined when the info is unusable.
   */
  redirect(info: unknown, via?: ServerAddress<O> | string): ServerAddress<O> | undefined {
    const member = parseMember(info);
    if (member === undefined) return undefined;
    const viaEntry = this.viaEntry(via);
    const resolved = this.resolve(member, viaEntry, 'redirect');
    const verdict = this.verdict(resolved, viaEntry);
    if (verdict !== 'ok') {
      this.reportIgnored(verdict, [resolved], 1, viaEntry);
      return undefined;
    }
    const existing = this.entries.get(resolved.key);
    if (existing === undefined) {
      if (this.learnedCount() >= this.maxLearned) {
        this.reportIgnored('over-cap', [resolved], 1, viaEntry);
        return undefined;
      }
      this.insert(resolved);
    }
    this.preferredKey = resolved.key;
    return this.entries.get(resolved.key);
  }

  /** Apply already-parsed members. `undefined` or `[]` leaves the pool alone. */
  applyMembers(members: readonly MemberInfo[] | undefined, via?: ServerAddress<O> | string): PoolChange<O> {
    const change: PoolChange<O> = { added: [], removed: [] };
    if (members === undefined || members.length === 0 || this.serverListAction === 'ignore') return change;
    const viaEntry = this.viaEntry(via);
    const incoming = new Map<string, ServerAddress<O>>();
    const refused = {
      'weaker-scheme': { examples: [] as ServerAddress<O>[], count: 0 },
      'other-transport': { examples: [] as ServerAddress<O>[], count: 0 },
    };
    let read = 0;
    // a list longer than the cap is cut where the cap is reached (the rest is not even resolved)
    for (; read < members.length && incoming.size < this.maxLearned; read++) {
      const r = this.resolve(members[read]!, viaEntry, 'learned');
      const verdict = this.verdict(r, viaEntry);
      if (verdict !== 'ok') {
        const bucket = refused[verdict];
        bucket.count++;
        if (bucket.examples.length < IGNORED_EXAMPLES) bucket.examples.push(r);
      } else if (!incoming.has(r.key)) incoming.set(r.key, r);
    }
    for (const reason of ['weaker-scheme', 'other-transport'] as const) {
      const bucket = refused[reason];
      if (bucket.count > 0) this.reportIgnored(reason, bucket.examples, bucket.count, viaEntry);
    }
    const unread = members
      .slice(read, read + IGNORED_EXAMPLES)
      .map((m) => this.resolve(m, viaEntry, 'learned'));
    if (read < members.length) this.reportIgnored('over-cap', unread, members.length - read, viaEntry);
    // refresh broker-reported state of members we already know (credentials stay as they were)
    for (const [key, r] of incoming) {
      const existing = this.entries.get(key);
      if (existing === undefined) continue;
      const updated: Mutable<ServerAddress<O>> = { ...existing };
      for (const f of ['hostname', 'memberId', 'quorate', 'leader'] as const) {
        if (r[f] !== undefined) (updated as Record<string, unknown>)[f] = r[f];
      }
      this.entries.set(key, updated);
      if (r.quorate === true) delete this.statsByKey.get(key)!.notQuorateUntil;
    }
    if (this.serverListAction === 'replace') {
      const keep = new Set(incoming.keys());
      if (this.currentKey !== undefined) keep.add(this.currentKey);
      if (viaEntry !== undefined) keep.add(viaEntry.key);
      for (const key of [...this.order]) {
        if (keep.has(key)) continue;
        change.removed.push(this.entries.get(key)!);
        this.remove(key);
      }
    }
    const fresh = [...incoming.values()].filter((r) => !this.entries.has(r.key));
    const room = Math.max(0, this.maxLearned - this.learnedCount());
    if (fresh.length > room)
      this.reportIgnored(
        'over-cap',
        fresh.slice(room, room + IGNORED_EXAMPLES),
        fresh.length - room,
        viaEntry,
      );
    const taken = fresh.slice(0, room);
    for (const r of this.randomize ? shuffled(taken, this.random) : taken) {
      this.insert(r);
      change.added.push(r);
    }
    return change;
  }

  /** A learned member is dialled only over the same transport, at least as safe as where it was learned. */
  private verdict(r: ServerAddress<O>, via: ServerAddress<O> | undefined): FollowVerdict {
    return followVerdict(this.fromScheme(via), r.scheme);
  }

  private fromScheme(via: ServerAddress<O> | undefined): ServerAddress<O>['scheme'] {
    return via?.scheme ?? this.baselineScheme;
  }

  /** Members besides the configured ones (what maxLearnedMembers caps). */
  private learnedCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.source !== 'configured') n++;
    return n;
  }

  private reportIgnored(
    reason: IgnoredMembers['reason'],
    examples: readonly ServerAddress<O>[],
    count: number,
    via: ServerAddress<O> | undefined,
  ): void {
    if (this.onIgnored === undefined) return;
    const ignored: IgnoredMembers = { reason, count, examples: examples.map((e) => describeServer(e)) };
    if (via !== undefined) ignored.via = describeServer(via);
    this.onIgnored(ignored);
  }

  private viaEntry(via: ServerAddress<O> | string | undefined): ServerAddress<O> | undefined {
    if (via === undefined) return this.current;
    return typeof via === 'string' ? this.entries.get(via) : (this.entries.get(via.key) ?? via);
  }

  private resolve(
    listed: MemberInfo,
    via: ServerAddress<O> | undefined,
    source: ServerSource,
  ): ServerAddress<O> {
    const m = endpointFor(this.fromScheme(via), listed);
    const scheme = m.scheme ?? via?.scheme ?? this.baselineScheme;
    const port = m.port ?? DEFAULT_PORTS[scheme];
    const r: Mutable<ServerAddress<O>> = { key: serverKey(m.host, port), scheme, host: m.host, port, source };
    if (isWebSocketScheme(scheme)) r.path = '/';
    if (m.hostname !== undefined) r.hostname = m.hostname;
    if (via?.username !== undefined) r.username = via.username;
    if (via?.password !== undefined) r.password = via.password;
    if (via?.options !== undefined) r.options = via.options;
    if (m.memberId !== undefined) r.memberId = m.memberId;
    if (m.quorate !== undefined) r.quorate = m.quorate;
    if (m.leader !== undefined) r.leader = m.leader;
    return r;
  }

  private insert(r: ServerAddress<O>): void {
    this.entries.set(r.key, r);
    if (!this.statsByKey.has(r.key)) this.statsByKey.set(r.key, newStats());
    const at = this.randomize ? randomIndex(this.random, this.order.length + 1) : this.order.length;
    this.order.splice(at, 0, r.key);
    if (at <= this.lastIndex) this.lastIndex++;
  }

  private remove(key: string): void {
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
