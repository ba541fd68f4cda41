/**
 * Which member of a cluster runs the federation links (docs/federation.md#cluster): the one the
 * last applied federation-owner entry names (by `member@incarnation`), and only while it
 * serves (quorate, caught up). The leader names itself whenever its applied view names anyone
 * else or no one, so the links follow leadership: when the owner dies or loses quorum, the new
 * leader takes them over within an election and one tick.
 *
 * Two members may briefly both run a link (an old owner that has not yet noticed it lost
 * quorum): that costs nothing but work, because every move commits through the log with the
 * message's dedup key, and a member without quorum commits nothing.
 */
import type { Logger } from '../../common/logger.js';
import type { Federation } from '../federation/federation.js';
import type { ClusterBackend } from './cluster-backend.js';

/** What ownership needs from the member's replica. */
export interface OwnershipReplica {
  isLeader(): boolean;
  isQuorate(): boolean;
}

export interface FederationOwnershipOptions {
  /** This process: `member@incarnation`. */
  self: string;
  links: Federation;
  backend: ClusterBackend;
  replica: OwnershipReplica;
  logger: Logger;
}

export class FederationOwnership {
  private owner: string | undefined;
  private proposing = false;

  constructor(private readonly o: FederationOwnershipOptions) {}

  /** The state machine applied an owner entry (or restored a snapshot: undefined). */
  onOwner(owner: string | undefined): void {
    if (owner !== this.owner) this.o.logger.info?.({ owner: owner ?? null }, 'federation: links owner');
    this.owner = owner;
    this.update();
  }

  /** Every watch tick: the leader names itself when it is not the owner; links follow. */
  tick(): void {
    const { replica, backend, self } = this.o;
    if (
      this.owner !== self &&
      !this.proposing &&
      replica.isLeader() &&
      replica.isQuorate() &&
      backend.serving
    ) {
      this.proposing = true;
      backend
        .request({ kind: 'federation-owner', owner: self })
        .catch(() => {
          // not committed (lost leadership, timeout): the next tick tries again if still leader
        })
        .finally(() => {
          this.proposing = false;
        });
    }
    this.update();
  }

  private update(): void {
    void this.o.links.setActive(this.owner === this.o.self && this.o.backend.serving);
  }
}
