/**
 * What the federation bench reads from the members' monitoring endpoints (docs/monitoring.md):
 * commit indexes and log fsyncs (how well a round batched) and the federation links' state
 * (which upstream member the link uses, whether a link runs yet).
 */
import type { FederationLinkState } from '../../src/broker.js';
import type { ClusterMemberProcess } from './brokers.js';

/** The highest commit index the members of a cluster report (`GET /api/overview`); null: none answered. */
export async function commitIndexOf(httpUrls: readonly string[]): Promise<number | null> {
  const indexes = await Promise.all(
    httpUrls.map(async (url) => {
      try {
        const res = await fetch(new URL('/api/overview', url), { signal: AbortSignal.timeout(2_000) });
        const doc = (await res.json()) as { commitIndex?: unknown };
        return typeof doc.commitIndex === 'number' ? doc.commitIndex : null;
      } catch {
        return null;
      }
    }),
  );
  const known = indexes.filter((i): i is number => i !== null);
  return known.length > 0 ? Math.max(...known) : null;
}

/**
 * The log fsyncs the members of a cluster made so far, summed (`quorate_fsync_duration_seconds_count`
 * of each member's `GET /metrics`); null when one did not answer. Every append round a member
 * takes costs it one, so their growth per message says how well a round's entries were batched.
 */
export async function fsyncsOf(httpUrls: readonly string[]): Promise<number | null> {
  const counts = await Promise.all(
    httpUrls.map(async (url) => {
      try {
        const res = await fetch(new URL('/metrics', url), { signal: AbortSignal.timeout(2_000) });
        const line = /^quorate_fsync_duration_seconds_count(?:\{\})? (\d+)$/m.exec(await res.text());
        return line === null ? null : Number(line[1]);
      } catch {
        return null;
      }
    }),
  );
  return counts.some((c) => c === null) ? null : counts.reduce<number>((a, c) => a + (c ?? 0), 0);
}

/** The federation links a member reports (`GET /api/federation`); undefined: it did not answer. */
async function federationLinks(httpUrl: string): Promise<FederationLinkState[] | undefined> {
  try {
    const res = await fetch(new URL('/api/federation', httpUrl), { signal: AbortSignal.timeout(1_000) });
    return ((await res.json()) as { links: FederationLinkState[] }).links;
  } catch {
    return undefined; // not answering (yet)
  }
}

/**
 * The upstream member west's running link is connected to (`n2`): that member delivers to the
 * link and, when it is not its cluster's leader, forwards every acquire and accept to the leader,
 * so which member it is shapes the upstream's CPU figures.
 */
export async function linkUpstreamMember(
  httpUrls: readonly string[],
  upstream: readonly ClusterMemberProcess[],
): Promise<string | undefined> {
  for (const url of httpUrls) {
    const at = (await federationLinks(url))?.find((l) => l.state === 'running')?.upstreamMember;
    if (at === undefined) continue;
    const host = new URL(at).host;
    return upstream.find((m) => new URL(m.url).host === host)?.id ?? host;
  }
  return undefined;
}

/** True when one of the members (their monitoring endpoints) runs a federation link. */
export async function anyLinkRunning(httpUrls: string[]): Promise<boolean> {
  for (const url of httpUrls) {
    if ((await federationLinks(url))?.some((l) => l.state === 'running')) return true;
  }
  return false;
}
