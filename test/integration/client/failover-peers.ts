/**
 * Setup the client-failover-*.test.ts files share: rhea peers (test/client/rhea-peer.ts), client
 * connections and proxies that are closed after each test, and a wait for one connection event.
 */
import { afterEach } from 'vitest';
import type { LinkProxy } from '../../../src/cluster-broker/netproxy/index.js';
import { type Connection, type ConnectionEvents, type ConnectOptions, connect } from '../../../src/index.js';
import { type RheaPeer, type RheaPeerOptions, startRheaPeer } from '../../client/rhea-peer.js';

export const peers: RheaPeer[] = [];
export const conns: Connection[] = [];
export const proxies: LinkProxy[] = [];

export async function peer(opts: RheaPeerOptions = {}): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  peers.push(p);
  return p;
}

export async function client(urls: string[], extra: Partial<ConnectOptions> = {}): Promise<Connection> {
  const c = await connect({
    urls,
    randomizeMembers: false,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
    ...extra,
  });
  conns.push(c);
  return c;
}

export function once<K extends keyof ConnectionEvents>(
  conn: Connection,
  name: K,
): Promise<ConnectionEvents[K][0]> {
  return new Promise((resolve) =>
    conn.once(name, ((info: ConnectionEvents[K][0]) => resolve(info)) as never),
  );
}

/** Registers the afterEach that closes `conns`, `peers` and `proxies`; call once at the top of a test file. */
export function useFailoverCleanup(): void {
  afterEach(async () => {
    for (const c of conns.splice(0)) await c.close().catch(() => undefined);
    for (const p of peers.splice(0)) await p.stop().catch(() => undefined);
    for (const x of proxies.splice(0)) await x.close().catch(() => undefined);
  });
}
