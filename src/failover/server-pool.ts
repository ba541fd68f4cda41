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
 * Selection and per-member accounting are in server-rotation.ts, the options in
 * server-pool-options.ts. Plain state: no timers, no sockets.
 */

import { shuffled } from '../common/random.js';
import {
  failoverListFromOpenProperties,
  isWebSocketScheme,
  type MemberInfo,
  parseMember,
  parseMemberList,
} from '../wire-extensions.js';
import { endpointFor, type FollowVerdict, followVerdict } from './scheme-policy.js';
import {
  DEFAULT_PORTS,
  describeServer,
  type ServerAddress,
  type ServerSource,
  serverKey,
} from './server-address.js';
import type { IgnoredMembers } from './server-pool-options.js';
import { ServerRotation } from './server-rotation.js';

const IGNORED_EXAMPLES = 3;

export interface PoolChange<O = unknown> {
  added: ServerAddress<O>[];
  removed: ServerAddress<O>[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** The server pool: the rotation of server-rotation.ts, fed by what brokers say about members. */
export class ServerPool<O = unknown> extends ServerRotation<O> {
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
}
