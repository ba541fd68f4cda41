/**
 * Safety checks run after every simulation step:
 *  - election safety: at most one leader per term;
 *  - log matching: an entry (index, term) has the same payload and the same predecessor term in
 *    every log that ever held it (by induction, logs sharing an entry agree on all earlier ones);
 *  - state machine safety: no two members apply different entries at one index, and the state
 *    (a hash chain over applied payloads) agrees at every index, snapshots included;
 *  - leader completeness: a leader of a term later than the one in which the highest applied
 *    (committed) entry was committed holds that entry. The committing term is not observable, so
 *    it is bounded by the highest term any member had reached when the entry was first applied;
 *    a stale leader of an old term (it may still gather old votes) is not required to hold it.
 */
import type { Entry } from '../../../../src/cluster-broker/replication/raft/types.js';

/** A member's log as far as the checks need it (what it has written to its store). */
export interface LogView {
  /** Entries up to here are covered by the snapshot. */
  readonly snapshotIndex: number;
  term(index: number): number | undefined;
}

export class SafetyViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetyViolation';
  }
}

export function payloadKey(data: Uint8Array | null): string {
  if (data === null) return '-';
  let s = '';
  for (const b of data) s += String.fromCharCode(b);
  return s;
}

/** FNV-style hash chain step for the simulated state machine. */
export function chain(hash: number, e: Entry): number {
  let h = (hash ^ e.index) >>> 0;
  h = Math.imul(h ^ e.term, 16777619) >>> 0;
  if (e.data) for (const b of e.data) h = Math.imul(h ^ b, 16777619) >>> 0;
  return h;
}

export class Checker {
  private leaders = new Map<number, string>();
  private entries = new Map<string, string>();
  private applied: { term: number; key: string }[] = [];
  private smHash: number[] = [0];
  /** Highest index applied anywhere (hence committed), with its term. */
  maxCommitted = 0;
  maxCommittedTerm = 0;
  /** Upper bound of the term in which maxCommitted was committed. */
  private committedBy = 0;
  /** Highest term any member has reached (fed by the simulation). */
  maxTerm = 0;

  onLeader(id: string, term: number, log: LogView): void {
    const prev = this.leaders.get(term);
    if (prev !== undefined && prev !== id) {
      throw new SafetyViolation(`two leaders in term ${term}: ${prev} and ${id}`);
    }
    this.leaders.set(term, id);
    const c = this.maxCommitted;
    if (c === 0 || term <= this.committedBy) return;
    if (c <= log.snapshotIndex) return; // covered by the snapshot, checked through the state hash
    const t = log.term(c);
    if (t !== this.maxCommittedTerm) {
      throw new SafetyViolation(
        `leader ${id} of term ${term} lacks committed entry ${c}@${this.maxCommittedTerm} (has ${t ?? 'none'})`,
      );
    }
  }

  /** An entry a member writes to its store, after `prevTerm` (undefined: not known). */
  onLogEntry(id: string, e: Entry, prevTerm: number | undefined): void {
    const k = `${e.index}:${e.term}`;
    const v = `${prevTerm ?? '?'}|${payloadKey(e.data)}`;
    const seen = this.entries.get(k);
    if (seen === undefined) {
      this.entries.set(k, v);
    } else if (seen !== v) {
      const [sp, sd] = seen.split('|');
      const [vp, vd] = v.split('|');
      if (sd !== vd || (sp !== '?' && vp !== '?' && sp !== vp)) {
        throw new SafetyViolation(`log matching: ${id} holds ${k} as ${v}, seen before as ${seen}`);
      }
    }
  }

  /** A member applied entry e, reaching state hash h. */
  onApply(id: string, e: Entry, h: number): void {
    const a = this.applied[e.index];
    const key = payloadKey(e.data);
    if (a === undefined) {
      this.applied[e.index] = { term: e.term, key };
      this.smHash[e.index] = h;
    } else if (a.term !== e.term || a.key !== key) {
      throw new SafetyViolation(
        `${id} applied ${e.index}@${e.term} (${key}); another member applied ${e.index}@${a.term} (${a.key})`,
      );
    } else if (this.smHash[e.index] !== h) {
      throw new SafetyViolation(`${id}: state at ${e.index} differs from another member's`);
    }
    if (e.index > this.maxCommitted) {
      this.maxCommitted = e.index;
      this.maxCommittedTerm = e.term;
      this.committedBy = this.maxTerm;
    }
  }

  /** A member restored a snapshot (index, state hash). */
  onRestore(id: string, index: number, h: number): void {
    const known = this.smHash[index];
    if (known === undefined)
      throw new SafetyViolation(`${id} restored snapshot at ${index}, never applied anywhere`);
    if (known !== h) throw new SafetyViolation(`${id} restored snapshot at ${index} with a different state`);
  }
}
