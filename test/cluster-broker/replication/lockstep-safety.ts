/** The safety properties the simulation's checker holds a cluster to, for the lock-step Cluster. */
import type { Cluster } from './lockstep-cluster.js';

/** Every member that ever led `term`, by the role changes its Readies reported (restarts included). */
export function leadersOf(c: Cluster, term: number): string[] {
  return c.ids.filter((id) =>
    c.readies.get(id)!.some((r) => r.softState?.role === 'leader' && r.softState.term === term),
  );
}

/**
 * What went wrong: two leaders in one term (election safety), a leader whose log lacks an entry
 * some member applied (leader completeness: applied means committed), two members that applied
 * different entries at one index. Empty when the cluster stayed safe.
 */
export function safetyViolations(c: Cluster): string[] {
  const out: string[] = [];
  const terms = new Set(c.ids.map((id) => c.core(id).currentTerm));
  for (let term = 1; term <= Math.max(...terms); term++) {
    const leaders = leadersOf(c, term);
    if (leaders.length > 1) out.push(`two leaders in term ${term}: ${leaders.join(' and ')}`);
  }
  for (const leader of c.leaders()) {
    const log = c.core(leader).log;
    const lacks = [...c.applied.values()].flat().filter((e) => log.term(e.index) !== e.term);
    const named = new Set(lacks.map((e) => `leader ${leader} lacks committed entry ${e.index}@${e.term}`));
    out.push(...named);
  }
  return [...out, ...c.conflicts()];
}
