/**
 * The `--peers` list of a member, checked so a typo cannot make a lone "quorum": every id and
 * every address once, this member in it, its cluster port the one the others dial.
 */
import type { PeerAddress } from '../replication/tcp-transport.js';
import { isValidMemberId } from './consumer-keys.js';
import { MemberConfigError } from './errors.js';

/** `host:port` as compared and recorded (host lower-cased, IPv6 brackets dropped). */
export function peerAddressKey(a: PeerAddress): string {
  return `${a.host.toLowerCase()}:${a.port}`;
}

/** Parses `id=host:port,...`; throws MemberConfigError on a bad entry or a duplicate id or address. */
export function parsePeerList(spec: string): Record<string, PeerAddress> {
  const out: Record<string, PeerAddress> = {};
  const byAddress = new Map<string, string>();
  for (const part of spec.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    const colon = p.lastIndexOf(':');
    if (eq <= 0 || colon <= eq + 1)
      throw new MemberConfigError(`--peers: bad entry '${p}' (want id=host:port)`);
    const id = p.slice(0, eq);
    const host = p.slice(eq + 1, colon).replace(/^\[|\]$/g, '');
    const rawPort = p.slice(colon + 1);
    const port = Number(rawPort);
    if (!/^\d+$/.test(rawPort) || port < 1 || port > 65535) {
      throw new MemberConfigError(`--peers: bad port in '${p}' (1..65535)`);
    }
    if (!isValidMemberId(id))
      throw new MemberConfigError(`--peers: bad member id '${id}' (letters, digits, _ . -)`);
    if (out[id] !== undefined) {
      throw new MemberConfigError(
        `--peers names member '${id}' twice: every member must appear once, or one process could count as several votes`,
      );
    }
    const key = peerAddressKey({ host, port });
    const other = byAddress.get(key);
    if (other !== undefined) {
      throw new MemberConfigError(
        `--peers gives '${other}' and '${id}' the same address ${key}: one process would count as two members`,
      );
    }
    byAddress.set(key, id);
    out[id] = { host, port };
  }
  if (Object.keys(out).length === 0) throw new MemberConfigError('--peers names no member');
  return out;
}

/** Checks this member against its peer list: named in it, and `clusterPort` (if given) its own entry's port. */
export function checkOwnEntry(
  id: string,
  peers: Readonly<Record<string, PeerAddress>>,
  clusterPort: number | undefined,
): void {
  const own = peers[id];
  if (own === undefined) {
    throw new MemberConfigError(
      `--peers names no member '${id}' (it names ${Object.keys(peers).join(', ')})`,
    );
  }
  if (clusterPort !== undefined && clusterPort !== own.port) {
    throw new MemberConfigError(
      `--cluster-port ${clusterPort} disagrees with this member's --peers entry ${id}=${own.host}:${own.port}: ` +
        `the other members dial ${own.port}. Drop --cluster-port or make the two agree`,
    );
  }
}
