/**
 * The logical content of a member's store: metadata (term, vote), the last snapshot, and the log
 * (entries after `base`). Both the file storage (replaying its records on recovery) and the
 * simulated disk build this image with the same operations, so their recovery rules are one.
 *
 * Write order of one Ready (each step durable before the next matters only for crash tolerance):
 *   snapshot file  ->  log rewrite (compaction, base := snapshot)  ->  log records  ->  metadata.
 */
import type { Entry, HardState, InitialState, PersistOps, Snapshot } from './raft/types.js';

export type StoreOp =
  | { readonly kind: 'snapshot'; readonly snapshot: Snapshot }
  | { readonly kind: 'rewrite'; readonly base: { index: number; term: number } }
  | { readonly kind: 'truncate'; readonly from: number }
  | { readonly kind: 'entry'; readonly entry: Entry }
  | { readonly kind: 'hard-state'; readonly hardState: HardState };

/** The store operations for one Ready's persist, in their durable order. */
export function persistToOps(p: PersistOps): StoreOp[] {
  const ops: StoreOp[] = [];
  if (p.snapshot) {
    ops.push({ kind: 'snapshot', snapshot: p.snapshot });
    ops.push({ kind: 'rewrite', base: { index: p.snapshot.index, term: p.snapshot.term } });
  }
  if (p.truncateFrom !== undefined) ops.push({ kind: 'truncate', from: p.truncateFrom });
  for (const entry of p.entries) ops.push({ kind: 'entry', entry });
  if (p.hardState) ops.push({ kind: 'hard-state', hardState: p.hardState });
  return ops;
}

export class StoreImage {
  hardState: HardState = { term: 0, vote: null };
  snapshot: Snapshot | undefined;
  /** The log file holds entries after base (base = the snapshot it was last compacted to). */
  base = { index: 0, term: 0 };
  entries: Entry[] = [];

  lastIndex(): number {
    return this.base.index + this.entries.length;
  }

  termAt(index: number): number | undefined {
    if (index === this.base.index) return this.base.term;
    if (index < this.base.index || index > this.lastIndex()) return undefined;
    return this.entries[index - this.base.index - 1]!.term;
  }

  apply(op: StoreOp): void {
    switch (op.kind) {
      case 'snapshot':
        this.snapshot = op.snapshot;
        break;
      case 'rewrite': {
        // keep the entries after the new base only if they chain from it
        const keep = this.termAt(op.base.index) === op.base.term;
        this.entries = keep ? this.entries.slice(Math.max(0, op.base.index - this.base.index)) : [];
        this.base = { ...op.base };
        break;
      }
      case 'truncate':
        if (op.from <= this.base.index) this.entries = [];
        else if (op.from <= this.lastIndex()) this.entries.length = op.from - this.base.index - 1;
        break;
      case 'entry':
        this.appendEntry(op.entry);
        break;
      case 'hard-state':
        this.hardState = op.hardState;
        break;
    }
  }

  /** apply() of an entry op, for a caller with the entry alone (no op object per entry). */
  appendEntry(e: Entry): void {
    if (e.index <= this.base.index) return;
    if (e.index <= this.lastIndex()) this.entries.length = e.index - this.base.index - 1;
    if (e.index !== this.lastIndex() + 1) {
      throw new Error(`store: entry ${e.index} does not follow ${this.lastIndex()}`);
    }
    this.entries.push(e);
  }

  applyPersist(p: PersistOps): void {
    for (const op of persistToOps(p)) this.apply(op);
  }

  /**
   * What the core restarts from. Entries after the snapshot are kept only when they provably
   * chain from it (a crash between writing the snapshot and rewriting the log leaves a suffix
   * that may belong to a different history).
   */
  toInitialState(): InitialState {
    this.recover();
    const snap = this.snapshot;
    return { hardState: this.hardState, ...(snap ? { snapshot: snap } : {}), entries: this.entries };
  }

  /**
   * Finish a compaction a crash interrupted (snapshot written, log not yet rewritten). Returns true
   * when the log changed, so a file store knows to rewrite its log file.
   */
  recover(): boolean {
    const snap = this.snapshot;
    if (!snap || (this.base.index === snap.index && this.base.term === snap.term)) return false;
    this.apply({ kind: 'rewrite', base: { index: snap.index, term: snap.term } });
    return true;
  }
}
