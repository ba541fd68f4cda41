/** What `handle.federation()` reports per link (docs/federation.md#operator). */

/**
 * Where a link is: `connecting` (no upstream connection, or failing over), `running` (attached
 * upstream, moving: on demand for a queue, everything for a topic), `refused` (the upstream reports our own cluster id: it never
 * runs), `standby` (a cluster member that does not own the link now), `stopped`.
 */
export type FederationLinkPhase = 'connecting' | 'running' | 'refused' | 'standby' | 'stopped';

/** What a link moves: a queue's messages on demand, or a topic's every message. */
export type FederationLinkKind = 'queue' | 'topic';

/**
 * One link: one upstream queue moving into the local queue of the same name, or one upstream
 * topic republished to the local topic of the same name.
 */
export interface FederationLinkState {
  /** The upstream's `name` in the configuration. */
  upstream: string;
  /** A queue link or a topic link. */
  kind: FederationLinkKind;
  /** The queue, or the topic of a topic link (the key predates topic links). */
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
  /**
   * Messages not moved because their route forbids it (a cycle, or maxHops): left upstream by a
   * queue link, dropped from its own subscription by a topic link.
   */
  leftUpstream: number;
  /** The last thing that went wrong, if anything did. */
  lastError: string | undefined;
}
