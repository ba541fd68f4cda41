/** What `handle.federation()` reports per link (docs/federation.md#operator). */

/**
 * Where a link is: `connecting` (no upstream connection, or failing over), `running` (attached
 * upstream, moving on demand), `refused` (the upstream reports our own cluster id: it never
 * runs), `standby` (a cluster member that does not own the link now), `stopped`.
 */
export type FederationLinkPhase = 'connecting' | 'running' | 'refused' | 'standby' | 'stopped';

/** One link: one upstream queue moving into the local queue of the same name. */
export interface FederationLinkState {
  /** The upstream's `name` in the configuration. */
  upstream: string;
  /** The queue. */
  queue: string;
  /** Where the link is now. */
  state: FederationLinkPhase;
  /** The upstream member connected to now (undefined while not connected). */
  upstreamMember: string | undefined;
  /** The upstream's cluster id, as its Open said (undefined before the first connection). */
  upstreamClusterId: string | undefined;
  /** Messages moved (committed here, then accepted upstream). */
  moved: number;
  /** Re-sent moves the local duplicate detection absorbed. */
  duplicates: number;
  /** Messages left upstream because their route forbids the move (a cycle, or maxHops). */
  leftUpstream: number;
  /** The last thing that went wrong, if anything did. */
  lastError: string | undefined;
}
