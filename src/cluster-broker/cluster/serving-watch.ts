/**
 * When a member serves clients (docs/cluster-member.md, "Quorum"):
 *
 * - not quorate (no majority reachable: `replica.isQuorate()` false) for `graceMs` -> stop
 *   serving: the server closes every connection with amqp:connection:forced, description
 *   `not quorate...`, and answers new ones with Open + Close. The grace rides out an ordinary
 *   election; `graceMs` + the Raft detection time (election timeout) + the tick stay under 2 s.
 * - serve again once quorate AND caught up: applied index >= the leader's commit index as of
 *   rejoining (a follower reads it from the leader's status message, a leader from its own
 *   commit once it committed an entry of its term), and once the release of every consumer this
 *   member holds in the replicated state (earlier incarnations; its own closed links after a loss
 *   of quorum) has committed, and once the replica finished recovering a damaged or blank store
 *   (docs/production.md).
 * - stopped and resumed (SIGSTOP, a frozen VM, a long GC pause): a gap between two ticks longer
 *   than `pauseLimitMs` -> stop serving at once, no grace (docs/cluster-member.md#paused): while
 *   it was stopped the others may have elected a leader and served, so nothing it holds may be
 *   served until it hears from the cluster again; then the rule above (quorate, caught up with a
 *   leader heard from since the resume, own consumers released) lets it serve again.
 */

import { notQuorateDescription } from '../../wire-extensions.js';
import type { RecoveryReason } from '../replication/raft/types.js';
import type { ClusterBackend } from './cluster-backend.js';
import type { Membership } from './membership.js';

export interface ReplicaView {
  isLeader(): boolean;
  isQuorate(): boolean;
  canServeReads(): boolean;
  readonly leaderId: string | null;
  readonly term: number;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  /** Still recovering a damaged or blank store (no votes, acks not counted): not caught up yet. */
  readonly recovering: RecoveryReason | null;
}

export interface ServingWatchOptions {
  memberId: string;
  incarnation: string;
  memberCount: number;
  /** Not quorate this long -> stop serving. Default 600 ms. */
  graceMs?: number;
  /**
   * A gap this long between two ticks means the process was stopped: stop serving at once.
   * Default 1_000 ms: longer than the election timeout (the others may have elected a leader
   * meanwhile), and far above the tick interval of a busy but running member.
   */
  pauseLimitMs?: number;
}

export class ServingWatch {
  private notQuorateSince: number | undefined;
  private quorateSince: number | undefined;
  private target: number | undefined;
  private selfReleased = false;
  private releasing = false;
  private readonly graceMs: number;
  private readonly pauseLimitMs: number;
  private lastTickAt: number | undefined;
  private awake: number | undefined;

  constructor(
    private readonly opts: ServingWatchOptions,
    private readonly replica: ReplicaView,
    private readonly membership: Membership,
    private readonly backend: ClusterBackend,
  ) {
    this.graceMs = opts.graceMs ?? 600;
    this.pauseLimitMs = opts.pauseLimitMs ?? 1_000;
  }

  private get notQuorateReason(): string {
    const n = this.opts.memberCount;
    return notQuorateDescription(
      `member ${this.opts.memberId} cannot reach a majority (${Math.floor(n / 2) + 1} of ${n})`,
    );
  }

  /**
   * When this process last began running without a stop: its first tick, or the tick that found
   * it had been stopped (undefined before the first tick). The others' silence before then may be
   * our own (src/cluster-broker/cluster/consumer-lease.ts).
   */
  get awakeSince(): number | undefined {
    return this.awake;
  }

  tick(now: number): void {
    const r = this.replica;
    if (this.lastTickAt === undefined) this.awake = now;
    const gap = this.lastTickAt === undefined ? 0 : now - this.lastTickAt;
    this.lastTickAt = now;
    if (gap > this.pauseLimitMs) this.resumedAfterPause(now, gap);
    if (!r.isQuorate()) {
      this.quorateSince = undefined;
      this.target = undefined;
      this.notQuorateSince ??= now;
      if (!this.backend.serving) this.backend.setServing(false, this.notQuorateReason);
      else if (now - this.notQuorateSince >= this.graceMs)
        this.backend.setServing(false, this.notQuorateReason);
      // Not serving means every client connection here was closed: before serving again, release
      // every consumer this member holds in the replicated state, or a request of a closed link
      // that committed after its refused release-consumer would keep its messages acquired.
      if (!this.backend.serving) this.selfReleased = false;
      return;
    }
    this.notQuorateSince = undefined;
    this.quorateSince ??= now;
    if (this.backend.serving) return;
    if (this.target === undefined) {
      if (r.isLeader()) {
        if (r.canServeReads()) this.target = r.commitIndex;
      } else if (r.leaderId !== null && this.membership.heardSince(r.leaderId, this.quorateSince)) {
        const st = this.membership.statusOf(r.leaderId);
        if (st && st.term === r.term) this.target = st.commitIndex;
      }
    }
    if (this.target === undefined || r.appliedIndex < this.target || r.recovering !== null) {
      this.backend.setServing(false, notQuorateDescription('catching up with the cluster'));
      return;
    }
    if (!this.selfReleased) {
      if (!this.releasing) {
        this.releasing = true;
        this.backend
          // keep nothing: at start-up this incarnation holds no consumers yet, and after a loss
          // of quorum its links were all closed
          .request({ kind: 'release-owner', member: this.opts.memberId, keep: '' })
          .then(
            () => {
              this.selfReleased = true;
            },
            () => {},
          )
          .finally(() => {
            this.releasing = false;
          });
      }
      return;
    }
    this.backend.setServing(true);
  }

  /**
   * The process ran again after `gap` ms stopped: close every client connection before serving
   * anything from what may be stale state, and start over as a member that just rejoined (a
   * leader heard from since now; the consumers it held released). Acknowledgements were never
   * at risk: they wait for commit, and a request of a term it no longer holds fails.
   */
  private resumedAfterPause(now: number, gap: number): void {
    this.awake = now;
    this.backend.setServing(
      false,
      notQuorateDescription(`member ${this.opts.memberId} was stopped for ${Math.round(gap)} ms`),
    );
    this.quorateSince = now;
    this.notQuorateSince = undefined;
    this.target = undefined;
    this.selfReleased = false;
  }
}
