/**
 * What a member's monitoring endpoints say about the cluster: its own Raft position and, for
 * each other member, what THIS member knows of it. A member's page therefore shows its own view
 * (a member cut off from the rest shows the others unreachable and itself not quorate), which is
 * what an operator needs to find out who sees whom.
 *
 * Lag, in log entries, against the most advanced commit index this member knows of:
 * - from the member's status messages (every 100 ms): that reference minus the commit index it
 *   last reported, so an unreachable member's lag grows while the others move on;
 * - on the leader also from its replication progress: its last index minus what the follower
 *   acknowledged; the smaller of the two estimates is shown (a new leader knows nothing of a
 *   follower's log until it answers).
 *
 * Client counts (connections, consumers) of another member come from its status messages too,
 * and only while it is reachable (docs/monitoring.md#cluster-counts).
 */
import type { ClusterSource, ClusterStatus, MemberEntry } from '../http/types.js';
import type { Replica } from '../replication/replica.js';
import type { ClusterBackend } from './cluster-backend.js';
import type { Membership } from './membership.js';

export interface MemberStatusInputs {
  id: string;
  clusterId: string;
  memberIds: readonly string[];
  replica: () => Replica | undefined;
  membership: () => Membership | undefined;
  backend: ClusterBackend;
  /** This member's own monitoring URL (null without one). */
  httpUrl: () => string | null;
}

export class MemberStatusSource implements ClusterSource {
  private changes = 0;
  private lastLeader: string | null = null;

  constructor(private readonly inputs: MemberStatusInputs) {}

  /** Call on every role/leader change the replica reports. */
  noteLeader(leader: string | null): void {
    if (leader !== null && leader !== this.lastLeader) {
      if (this.lastLeader !== null) this.changes++;
      this.lastLeader = leader;
    }
  }

  leaderChanges(): number {
    return this.changes;
  }

  fsyncLatency() {
    return this.inputs.replica()?.fsyncLatency;
  }

  status(): ClusterStatus {
    const { id, clusterId, memberIds, backend } = this.inputs;
    const rep = this.inputs.replica();
    const mship = this.inputs.membership();
    const now = Date.now();
    const quorate = rep?.isQuorate() ?? false;
    const serving = backend.serving && quorate;
    const listed = new Map(
      (mship?.list({ selfServing: serving, leaderId: rep?.leaderId ?? null, now }) ?? []).map((m) => [
        m.id,
        m,
      ]),
    );
    const commit = rep?.commitIndex ?? 0;
    let reference = commit;
    for (const m of memberIds) {
      const reported = mship?.statusOf(m)?.commitIndex;
      if (reported !== undefined && reported > reference) reference = reported;
    }
    const leading = rep?.isLeader() === true;
    const members: MemberEntry[] = memberIds.map((m) => {
      const l = listed.get(m);
      const url = l ? `${l.scheme}://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}` : null;
      if (m === id) {
        return {
          id: m,
          url,
          httpUrl: this.inputs.httpUrl(),
          reachable: true,
          lag: leading ? 0 : Math.max(0, reference - (rep?.appliedIndex ?? 0)),
          // the monitoring server fills in its own broker's counts (client-counts.ts)
          connections: null,
          consumers: null,
        };
      }
      const st = mship?.statusOf(m);
      const match = leading ? rep?.matchIndexOf(m) : undefined;
      // A new leader starts every follower at match 0 until it answers: where the member's own
      // report says it is closer, believe the report (the smaller of the two estimates).
      const estimates: number[] = [];
      if (match !== undefined && rep) estimates.push(Math.max(0, rep.lastIndex - match));
      if (st) estimates.push(Math.max(0, reference - st.commitIndex));
      const lag = estimates.length === 0 ? null : Math.min(...estimates);
      const reachable = mship?.reachable(m, now) ?? false;
      return {
        id: m,
        url,
        // a member's report is not trusted to be a web address (the status page links to it)
        httpUrl: webUrlOrNull(st?.httpUrl),
        reachable,
        lag,
        // a silent member's last counts are stale: unknown, never shown as if current
        connections: reachable ? (st?.connections ?? null) : null,
        consumers: reachable ? (st?.consumers ?? null) : null,
      };
    });
    return {
      member: id,
      clusterId,
      role: rep?.role ?? 'follower',
      term: rep?.term ?? 0,
      leader: rep?.leaderId ?? null,
      quorate,
      serving,
      commitIndex: commit,
      appliedIndex: rep?.appliedIndex ?? 0,
      members,
    };
  }
}

/** `u` when it is an http(s) URL, else null (docs/security.md#http-port). */
export function webUrlOrNull(u: string | null | undefined): string | null {
  if (typeof u !== 'string' || !URL.canParse(u)) return null;
  const { protocol } = new URL(u);
  return protocol === 'http:' || protocol === 'https:' ? u : null;
}
