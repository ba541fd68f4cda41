/**
 * What a member knows about the cluster's members, for clients: the Open frame's
 * `failover-server-list` and the `$cluster/membership` feed (docs/membership.md).
 *
 * Client (AMQP) addresses are learned from the others' status messages (`--peers` names cluster
 * ports) and cached in the data dir, so a member that reaches nobody still lists everyone it ever
 * heard of.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeMessage } from '../../codec/message.js';
import { isWebSocketUrl, type ListedMember, memberListValue } from '../../wire-extensions.js';
import { FILE_MODE } from '../files/file-modes.js';
import type { VirtualSource, VirtualSourceSink } from '../server/virtual-source.js';
import type { MemberStatus } from './peer-wire.js';

interface KnownAddress {
  host: string;
  port: number;
  scheme: 'amqp' | 'amqps';
  /** Its AMQP-over-WebSocket URL, when it serves one (docs/websocket.md#membership). */
  wsUrl?: string;
}

function sameAddress(a: KnownAddress | undefined, b: KnownAddress): boolean {
  return a?.host === b.host && a.port === b.port && a.scheme === b.scheme && a.wsUrl === b.wsUrl;
}

export interface MembershipOptions {
  selfId: string;
  /** Every member id, self included, in the order they are listed. */
  memberIds: readonly string[];
  self: KnownAddress;
  /** Where the learned addresses are cached (`<dataDir>/members.json`); absent: no cache. */
  dataDir?: string;
  /** A member not heard from for this long is listed `quorate: false`. Default 1500 ms. */
  reachableMs?: number;
}

export class Membership {
  private readonly addresses = new Map<string, KnownAddress>();
  private readonly heardAt = new Map<string, number>();
  private readonly statuses = new Map<string, MemberStatus>();
  private readonly cacheFile: string | undefined;
  private readonly reachableMs: number;

  constructor(private readonly opts: MembershipOptions) {
    this.reachableMs = opts.reachableMs ?? 1500;
    this.cacheFile = opts.dataDir === undefined ? undefined : join(opts.dataDir, 'members.json');
    this.loadCache();
    this.addresses.set(opts.selfId, opts.self);
  }

  get selfId(): string {
    return this.opts.selfId;
  }

  /** A status message from `from` arrived at `now`. */
  noteStatus(from: string, status: MemberStatus, now: number): void {
    if (!this.opts.memberIds.includes(from) || from === this.opts.selfId) return;
    this.heardAt.set(from, now);
    this.statuses.set(from, status);
    const heard: KnownAddress = { host: status.host, port: status.port, scheme: status.scheme };
    if (status.wsUrl !== undefined && isWebSocketUrl(status.wsUrl)) heard.wsUrl = status.wsUrl;
    if (sameAddress(this.addresses.get(from), heard)) return;
    this.addresses.set(from, heard);
    this.saveCache();
  }

  /** Milliseconds since `id` was last heard from (Infinity: never). */
  silentFor(id: string, now: number): number {
    const t = this.heardAt.get(id);
    return t === undefined ? Number.POSITIVE_INFINITY : now - t;
  }

  /** Heard from `id` at or after `t`. */
  heardSince(id: string, t: number): boolean {
    const h = this.heardAt.get(id);
    return h !== undefined && h >= t;
  }

  reachable(id: string, now: number): boolean {
    return this.silentFor(id, now) <= this.reachableMs;
  }

  /** The last status `id` sent (undefined: none yet). */
  statusOf(id: string): MemberStatus | undefined {
    return this.statuses.get(id);
  }

  /** The members as listed to clients (those whose client address is known), in id order. */
  list(view: { selfServing: boolean; leaderId: string | null; now: number }): ListedMember[] {
    const out: ListedMember[] = [];
    for (const id of this.opts.memberIds) {
      const a = this.addresses.get(id);
      if (!a) continue;
      const self = id === this.opts.selfId;
      const listed: ListedMember = {
        id,
        host: a.host,
        port: a.port,
        scheme: a.scheme,
        quorate: self ? view.selfServing : this.reachable(id, view.now),
        leader: view.leaderId === id,
      };
      if (a.wsUrl !== undefined) listed.wsUrl = a.wsUrl;
      out.push(listed);
    }
    return out;
  }

  private loadCache(): void {
    if (!this.cacheFile) return;
    try {
      const raw = JSON.parse(readFileSync(this.cacheFile, 'utf8')) as Record<string, KnownAddress>;
      for (const [id, a] of Object.entries(raw)) {
        if (!this.opts.memberIds.includes(id)) continue;
        if (typeof a?.host === 'string' && Number.isInteger(a.port)) {
          const cached: KnownAddress = {
            host: a.host,
            port: a.port,
            scheme: a.scheme === 'amqps' ? 'amqps' : 'amqp',
          };
          if (typeof a.wsUrl === 'string' && isWebSocketUrl(a.wsUrl)) cached.wsUrl = a.wsUrl;
          this.addresses.set(id, cached);
        }
      }
    } catch {
      // no cache yet (or unreadable): learn from the others
    }
  }

  private saveCache(): void {
    if (!this.cacheFile) return;
    const out: Record<string, KnownAddress> = {};
    for (const [id, a] of this.addresses) if (id !== this.opts.selfId) out[id] = a;
    try {
      const tmp = `${this.cacheFile}.tmp`;
      writeFileSync(tmp, JSON.stringify(out), { mode: FILE_MODE });
      renameSync(tmp, this.cacheFile);
    } catch {
      // a cache only: the next status message tries again
    }
  }
}

/** `$cluster/membership`: the current list at once, then the full list on every change. */
export class MembershipFeed implements VirtualSource {
  private readonly sinks = new Set<VirtualSourceSink>();
  private current: Uint8Array | undefined;
  private currentKey = '';

  constructor(private readonly listNow: () => ListedMember[]) {}

  subscribe(sink: VirtualSourceSink): () => void {
    this.sinks.add(sink);
    this.refresh();
    if (this.current) sink.send(this.current);
    return () => this.sinks.delete(sink);
  }

  /** Recompute; pushes to every subscriber when the list changed. */
  refresh(): void {
    const list = this.listNow();
    const key = JSON.stringify(list);
    if (key === this.currentKey && this.current) return;
    this.currentKey = key;
    this.current = encodeMessage({ body: memberListValue(list), bodyType: 'value' });
    for (const s of this.sinks) {
      if (s.open) s.send(this.current);
      else this.sinks.delete(s);
    }
  }

  get subscribers(): number {
    return this.sinks.size;
  }
}
