import { NetProxyError } from './errors.js';
import { type CutMode, LinkProxy, type LinkProxyStats } from './link-proxy.js';

/** A member's real cluster address (what the mesh's proxies forward to). */
export interface MeshMember {
  id: string;
  /** Default '127.0.0.1'. */
  clusterHost?: string;
  clusterPort: number;
}

export interface ProxyMeshOptions {
  members: readonly MeshMember[];
  /** Base seed of the lossy-link PRNGs (link k uses seed + k). Default 1. */
  seed?: number;
  /** How `partition` / `ring` / `cutLink` cut links. Default 'reset' (see `CutMode`). */
  cutMode?: CutMode;
}

/** One entry of a member's peer list: `id=host:port`. */
export interface PeerAddress {
  id: string;
  host: string;
  port: number;
}

/** One directed link of the mesh and its counters. */
export interface MeshLinkStats extends LinkProxyStats {
  /** The member that dials. */
  from: string;
  /** The member it dials. */
  to: string;
  /** Whether the link is cut now. */
  cut: boolean;
}

const linkKey = (from: string, to: string): string => `${from}->${to}`;

/**
 * Loopback proxies between every ordered pair of members: member i dials member j through
 * proxy(i->j), so the test controls each direction of each link. Member i's peer list names
 * proxy(i->j) for every j != i and its own real cluster address for itself.
 */
export class ProxyMesh {
  private readonly links = new Map<string, LinkProxy>();
  private readonly ids: string[];
  private readonly cutMode: CutMode;

  private constructor(private readonly options: ProxyMeshOptions) {
    this.ids = options.members.map((m) => m.id);
    if (new Set(this.ids).size !== this.ids.length)
      throw new NetProxyError('amqp:invalid-field', 'ProxyMesh: duplicate member id');
    this.cutMode = options.cutMode ?? 'reset';
    let k = 0;
    for (const from of options.members) {
      for (const to of options.members) {
        if (from.id === to.id) continue;
        const target = { host: to.clusterHost ?? '127.0.0.1', port: to.clusterPort };
        this.links.set(linkKey(from.id, to.id), new LinkProxy({ target, seed: (options.seed ?? 1) + k++ }));
      }
    }
  }

  /** Creates the mesh and starts every proxy listening on a free loopback port. */
  static async start(options: ProxyMeshOptions): Promise<ProxyMesh> {
    const mesh = new ProxyMesh(options);
    try {
      await Promise.all([...mesh.links.values()].map((p) => p.listen()));
    } catch (err) {
      await mesh.close();
      throw err;
    }
    return mesh;
  }

  get memberIds(): readonly string[] {
    return this.ids;
  }

  /** The proxy member `from` dials to reach member `to`. */
  link(from: string, to: string): LinkProxy {
    const proxy = this.links.get(linkKey(from, to));
    if (proxy === undefined)
      throw new NetProxyError('amqp:not-found', `ProxyMesh: no link ${linkKey(from, to)}`);
    return proxy;
  }

  /** Member `id`'s peer list: itself at its real address, every other member via proxy(id->j). */
  peersFor(id: string): PeerAddress[] {
    this.requireMember(id);
    return this.options.members.map((m) =>
      m.id === id
        ? { id: m.id, host: m.clusterHost ?? '127.0.0.1', port: m.clusterPort }
        : { id: m.id, host: this.link(id, m.id).host, port: this.link(id, m.id).port },
    );
  }

  /** `peersFor(id)` formatted as the `--peers` flag value: `n1=127.0.0.1:6672,n2=...`. */
  peersArg(id: string): string {
    return formatPeers(this.peersFor(id));
  }

  /**
   * Cuts every link between members of different groups and heals every link inside a group.
   * Members named in no group form one more group together (`[['n1']]` cuts n1 off from the
   * rest). Any shape works: one member alone, minority/majority, or more than two sides.
   * Replaces any earlier partition or ring.
   */
  partition(groups: readonly (readonly string[])[]): void {
    const groupOf = new Map<string, number>();
    groups.forEach((group, index) => {
      for (const id of group) {
        this.requireMember(id);
        if (groupOf.has(id))
          throw new NetProxyError('amqp:invalid-field', `ProxyMesh: member ${id} is in two partition groups`);
        groupOf.set(id, index);
      }
    });
    for (const id of this.ids) if (!groupOf.has(id)) groupOf.set(id, groups.length);
    this.applyReachability((from, to) => groupOf.get(from) === groupOf.get(to));
  }

  /**
   * A ring: each member reaches only its two neighbours in `order` (default: member order), in
   * both directions. With 3 members that is everyone; with 5 no member reaches a majority directly.
   */
  ring(order: readonly string[] = this.ids): void {
    for (const id of order) this.requireMember(id);
    if (new Set(order).size !== this.ids.length || order.length !== this.ids.length) {
      throw new NetProxyError('amqp:invalid-field', 'ProxyMesh: ring order must name every member once');
    }
    const n = order.length;
    const position = new Map(order.map((id, i) => [id, i]));
    this.applyReachability((from, to) => {
      const d = Math.abs(position.get(from)! - position.get(to)!);
      return d === 1 || d === n - 1;
    });
  }

  /**
   * Cuts the connections `from` dials to `to` (asymmetric faults). TCP is two-way: connections
   * `to` dials to `from` still carry traffic both ways, so this is a one-way fault only for
   * protocols where each member sends over the connections it dialled.
   */
  cutLink(from: string, to: string): void {
    const proxy = this.link(from, to);
    if (!proxy.isCut) proxy.cut(this.cutMode);
  }

  healLink(from: string, to: string): void {
    this.link(from, to).heal();
  }

  /** Whether `from` currently reaches `to` (its link is not cut). */
  canReach(from: string, to: string): boolean {
    return from === to || !this.link(from, to).isCut;
  }

  /** Heals every link. */
  heal(): void {
    for (const proxy of this.links.values()) proxy.heal();
  }

  /** Delays every chunk on every link by `ms` (0 restores full speed). */
  slow(ms: number): void {
    for (const proxy of this.links.values()) proxy.setDelay(ms);
  }

  /** Resets connections on every link with probability `p` per chunk (0 turns it off). */
  lossy(p: number, seed?: number): void {
    let k = 0;
    for (const proxy of this.links.values()) {
      proxy.setResetProbability(p, seed === undefined ? undefined : seed + k);
      k++;
    }
  }

  stats(): MeshLinkStats[] {
    const out: MeshLinkStats[] = [];
    for (const [key, proxy] of this.links) {
      const [from, to] = key.split('->') as [string, string];
      out.push({ from, to, cut: proxy.isCut, ...proxy.stats() });
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.links.values()].map((p) => p.close()));
  }

  private applyReachability(reachable: (from: string, to: string) => boolean): void {
    for (const from of this.ids) {
      for (const to of this.ids) {
        if (from === to) continue;
        if (reachable(from, to)) this.healLink(from, to);
        else this.cutLink(from, to);
      }
    }
  }

  private requireMember(id: string): void {
    if (!this.ids.includes(id)) throw new NetProxyError('amqp:not-found', `ProxyMesh: unknown member ${id}`);
  }
}

export function formatPeers(peers: readonly PeerAddress[]): string {
  return peers.map((p) => `${p.id}=${p.host}:${p.port}`).join(',');
}
