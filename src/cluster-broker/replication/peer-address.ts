/**
 * Where a member listens for the other members, and the `--peers` style list of them
 * (id=host:port,...) parsed into those addresses.
 */

/** Where a member listens for the other members (its cluster port). */
export interface PeerAddress {
  /** Host or IP address. */
  readonly host: string;
  /** TCP port. */
  readonly port: number;
}

/** Parse `n1=127.0.0.1:6672,n2=host:port,...` into ids and addresses. */
export function parsePeers(spec: string): Record<string, PeerAddress> {
  const out: Record<string, PeerAddress> = {};
  for (const part of spec.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    const colon = p.lastIndexOf(':');
    if (eq <= 0 || colon <= eq) throw new Error(`bad peer "${p}" (want id=host:port)`);
    const host = p.slice(eq + 1, colon).replace(/^\[|\]$/g, '');
    const port = Number(p.slice(colon + 1));
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port in "${p}"`);
    out[p.slice(0, eq)] = { host, port };
  }
  return out;
}
