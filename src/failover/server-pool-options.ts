/**
 * What a ServerPool (server-pool.ts) is configured with: the member-list policy, the cap on
 * learned members, the not-quorate backoff, and the report of members it did not take.
 */
import type { Random } from '../common/random.js';

export type ServerListAction = 'replace' | 'add' | 'ignore';

/**
 * Default cap on the members a pool keeps besides the configured ones (learned and redirect
 * targets together). A real cluster lists a handful; a longer list is a broken or hostile server,
 * and every entry is a host the client would dial with its credentials.
 */
export const MAX_LEARNED_MEMBERS = 64;

/** Members a broker told us about that the pool did not take, reported once per update. */
export interface IgnoredMembers {
  /**
   * `weaker-scheme`: a scheme of a weaker security class than the endpoint they were learned
   * through (e.g. amqp:// from an amqps:// member); `other-transport`: TCP members learned over
   * WebSocket (a member that lists no `ws`/`wss` URL) or the reverse; `over-cap`: beyond
   * `maxLearnedMembers`.
   */
  reason: 'weaker-scheme' | 'other-transport' | 'over-cap';
  /** how many were not taken */
  count: number;
  /** the first few of them, as URLs without credentials */
  examples: string[];
  /** the endpoint they were learned through, when known (URL without the password) */
  via?: string;
}

export interface NotQuorateBackoff {
  /**
   * first backoff after a not-quorate close (ms), default 250: a member says so mostly while an
   * election is under way, which takes tens of ms once the leader's death is seen (a longer hold
   * left the client dialling a dead member while the live ones were held back); consecutive
   * closes double it (a cluster that lost its quorum)
   */
  initialMs?: number;
  /** cap (ms), default 30000 */
  maxMs?: number;
  /** growth per consecutive not-quorate close, default 2 */
  factor?: number;
  /** extra random fraction in [0, jitter), default 0.5 */
  jitter?: number;
}

export interface ServerPoolOptions {
  /** shuffle configured and learned members (seeded by `random`), default true */
  randomize?: boolean;
  /** [0, 1) generator; default Math.random. Pass a seeded one for reproducible order. */
  random?: Random;
  /** what a non-empty broker list does to the pool, default 'replace' */
  serverListAction?: ServerListAction;
  notQuorateBackoff?: NotQuorateBackoff;
  /** most members kept besides the configured ones, default MAX_LEARNED_MEMBERS */
  maxLearnedMembers?: number;
  /** told about every update's members the pool did not take (for a warning in the log) */
  onIgnored?: (ignored: IgnoredMembers) => void;
}
