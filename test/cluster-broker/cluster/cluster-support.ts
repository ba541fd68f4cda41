/**
 * Helpers for the multi-process cluster tests: probing what a member says about itself in its
 * Open (failover-server-list), waiting for members to serve, finding the leader, sending with
 * retries across members.
 */
import { type ClusterHandle, type StartClusterOptions, startCluster } from '../../../src/broker.js';
import { waitFor } from '../../support/net.js';
import { closeConn, open, sendAll, url2port } from './amqp-helpers.js';

export interface ListedMember {
  id: string;
  host: string;
  port: number;
  scheme: string;
  quorate: boolean;
  leader: boolean;
}

/** Decodes rhea's view of a failover-server-list (maps with symbol keys come back as objects). */
export function parseList(v: unknown): ListedMember[] {
  if (!Array.isArray(v)) return [];
  return v.map((e) => {
    const m = e as Record<string, unknown>;
    return {
      id: String(m['quorate:member-id']),
      host: String(m['network-host']),
      port: Number(m.port),
      scheme: String(m.scheme),
      quorate: m['quorate:quorate'] === true,
      leader: m['quorate:leader'] === true,
    };
  });
}

/** What the member on `port` lists in its Open (undefined: it did not answer). */
export async function probe(port: number): Promise<ListedMember[] | undefined> {
  try {
    const o = await open(port);
    const list = parseList(o.properties?.['failover-server-list']);
    void closeConn(o.conn);
    return list;
  } catch {
    return undefined;
  }
}

/** The member on `port` says it serves (quorate and caught up). */
export async function serving(handle: ClusterHandle, id: string): Promise<boolean> {
  const m = handle.members().find((x) => x.id === id);
  if (m?.state !== 'running') return false;
  const list = await probe(m.amqpPort);
  return list?.find((x) => x.id === id)?.quorate === true;
}

export async function waitServing(
  handle: ClusterHandle,
  ids = handle.ids,
  timeoutMs = 30_000,
): Promise<void> {
  for (const id of ids) {
    await waitFor(() => serving(handle, id), { timeoutMs, what: `member ${id} serving`, intervalMs: 100 });
  }
}

/** The leader as the given member sees it (undefined: none known). */
export async function leaderSeenBy(handle: ClusterHandle, id: string): Promise<string | undefined> {
  const m = handle.members().find((x) => x.id === id)!;
  const list = await probe(m.amqpPort);
  return list?.find((x) => x.leader)?.id;
}

/** The leader every listed member agrees on (one of them: a killed leader is still named for a while). */
export async function waitLeader(
  handle: ClusterHandle,
  among = handle.ids,
  timeoutMs = 30_000,
): Promise<string> {
  let leader: string | undefined;
  await waitFor(
    async () => {
      const seen = await Promise.all(among.map((id) => leaderSeenBy(handle, id)));
      leader = seen[0];
      return leader !== undefined && among.includes(leader) && seen.every((s) => s === leader);
    },
    { timeoutMs, what: `a leader agreed on by ${among.join(',')}`, intervalMs: 100 },
  );
  return leader!;
}

export function portOf(handle: ClusterHandle, id: string): number {
  return url2port(handle.urls[handle.ids.indexOf(id)]!);
}

/** The attach error of a plain receiver on `address` via member `id` (undefined: it attached). */
export async function attachError(
  handle: ClusterHandle,
  id: string,
  address: string,
): Promise<string | undefined> {
  const o = await open(portOf(handle, id));
  try {
    return await new Promise<string | undefined>((resolve) => {
      const link = o.conn.open_receiver({ source: { address }, credit_window: 0 });
      link.once('receiver_open', () => {
        if (link.source?.address) resolve(undefined);
      });
      link.once('receiver_close', () => {
        resolve((link as unknown as { error?: { condition?: string } }).error?.condition ?? 'closed');
      });
    });
  } finally {
    await closeConn(o.conn);
  }
}

/** Sends `bodies` to `address` via member `id` in one connection; all must be accepted. */
export async function sendVia(
  handle: ClusterHandle,
  id: string,
  address: string,
  bodies: string[],
  options: { dedup?: boolean } = {},
): Promise<void> {
  const o = await open(portOf(handle, id));
  try {
    const outcomes = await sendAll(o.conn, address, bodies, options);
    const bad = outcomes.filter((x) => x !== 'accepted');
    if (bad.length > 0) throw new Error(`${bad.length} not accepted: ${bad.slice(0, 3).join(',')}`);
  } finally {
    await closeConn(o.conn);
  }
}

/** CLUSTER_DEBUG=1: member output (members' logs) and supervisor events on stderr. */
const debugLogger = process.env.CLUSTER_DEBUG
  ? {
      info: (o: unknown, m?: string) =>
        process.stderr.write(`${Date.now() % 100000} ${m} ${JSON.stringify(o)}\n`),
      warn: (o: unknown, m?: string) =>
        process.stderr.write(`${Date.now() % 100000} W ${m} ${JSON.stringify(o)}\n`),
      error: (o: unknown, m?: string) =>
        process.stderr.write(`${Date.now() % 100000} E ${m} ${JSON.stringify(o)}\n`),
    }
  : undefined;

export async function startTestCluster(opts: StartClusterOptions = {}): Promise<ClusterHandle> {
  return startCluster({
    nodes: 3,
    autoRestart: false,
    readyTimeoutMs: 90_000,
    ...(debugLogger
      ? {
          logger: debugLogger,
          onMemberOutput: (id: string, _stream: string, line: string) =>
            process.stderr.write(`[${id}] ${line}\n`),
        }
      : {}),
    ...opts,
  });
}

export function range(prefix: string, n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${from + i}`);
}
