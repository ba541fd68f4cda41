/**
 * Store losses for the lock-step Cluster, as FileStorage leaves the store after each
 * (docs/production.md#damaged-cluster-member): the member restarts from what is left.
 */
import { StoreImage } from '../../../src/cluster-broker/replication/store-image.js';
import type { Cluster } from './lockstep-cluster.js';

/** A store as FileStorage creates it in an empty data dir (docs/production.md#blank-member). */
export function blankStore(): StoreImage {
  const s = new StoreImage();
  s.hardState = { term: 0, vote: null, recovering: 'blank' };
  return s;
}

/** The member's data dir is emptied; it restarts blank. */
export function wipe(c: Cluster, id: string): void {
  c.stores.set(id, blankStore());
  c.applied.set(id, []);
  c.boot(id);
}

/**
 * The member's meta.json is damaged; it restarts recovering. FileStorage keeps the log and, with
 * no readable term or vote, takes the term of the last entry and no vote: the vote the member may
 * have cast since is forgotten.
 */
export function damageMeta(c: Cluster, id: string): void {
  const s = c.stores.get(id)!;
  s.hardState = { term: s.termAt(s.lastIndex()) ?? 0, vote: null, recovering: 'damaged' };
  c.applied.set(id, []);
  c.boot(id);
}
