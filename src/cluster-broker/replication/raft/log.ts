/**
 * The in-memory Raft log of one member: entries after the last snapshot, plus bookkeeping of
 * which entries the driver has already been given to persist and which are known durable.
 */
import type { Entry, Snapshot } from './types.js';

/** Bytes an entry costs on the wire besides its payload (index, term, framing), for batching. */
const ENTRY_OVERHEAD = 16;

export class RaftLog {
  /** Index and term of the last entry covered by the snapshot (0/0: none). */
  snapshotIndex = 0;
  snapshotTerm = 0;
  snapshot: Snapshot | undefined;
  private entries: Entry[] = [];
  /** Entries <= handedOut were given to the driver to persist (in some Ready). */
  handedOut = 0;
  /** Entries <= durable are known to be on stable storage. */
  durable = 0;

  constructor(snapshot: Snapshot | undefined, entries: readonly Entry[]) {
    if (snapshot) {
      this.snapshot = snapshot;
      this.snapshotIndex = snapshot.index;
      this.snapshotTerm = snapshot.term;
    }
    let expect = this.snapshotIndex + 1;
    for (const e of entries) {
      if (e.index < expect) continue;
      if (e.index !== expect) throw new Error(`log gap at ${expect}, found ${e.index}`);
      this.entries.push(e);
      expect++;
    }
    this.handedOut = this.lastIndex();
    this.durable = this.lastIndex();
  }

  firstIndex(): number {
    return this.snapshotIndex + 1;
  }

  lastIndex(): number {
    return this.snapshotIndex + this.entries.length;
  }

  lastTerm(): number {
    return this.entries.length > 0 ? this.entries[this.entries.length - 1]!.term : this.snapshotTerm;
  }

  /** Term of the entry at index, or undefined when unknown (compacted before the snapshot, or beyond). */
  term(index: number): number | undefined {
    if (index === this.snapshotIndex) return this.snapshotTerm;
    if (index < this.snapshotIndex || index > this.lastIndex()) return undefined;
    return this.entries[index - this.snapshotIndex - 1]!.term;
  }

  entry(index: number): Entry | undefined {
    if (index <= this.snapshotIndex || index > this.lastIndex()) return undefined;
    return this.entries[index - this.snapshotIndex - 1];
  }

  /** Entries in [from, to] (inclusive), at most maxBytes of payload (at least one entry). */
  slice(from: number, to: number, maxBytes = Number.POSITIVE_INFINITY): Entry[] {
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = Math.max(from, this.firstIndex()); i <= Math.min(to, this.lastIndex()); i++) {
      const e = this.entries[i - this.snapshotIndex - 1]!;
      bytes += (e.data ? e.data.length : 0) + ENTRY_OVERHEAD;
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  append(e: Entry): void {
    if (e.index !== this.lastIndex() + 1) throw new Error(`append at ${e.index}, last ${this.lastIndex()}`);
    this.entries.push(e);
  }

  /** Drop entries with index >= from. */
  truncateFrom(from: number): void {
    if (from <= this.snapshotIndex) throw new Error(`truncate ${from} inside snapshot ${this.snapshotIndex}`);
    if (from > this.lastIndex()) return;
    this.entries.length = from - this.snapshotIndex - 1;
    this.handedOut = Math.min(this.handedOut, from - 1);
    this.durable = Math.min(this.durable, from - 1);
  }

  /** The entries the driver has not been given yet; marks them handed out. */
  takeUnpersisted(): Entry[] {
    const out = this.slice(this.handedOut + 1, this.lastIndex());
    this.handedOut = this.lastIndex();
    return out;
  }

  /** The driver made `entries` durable: advance `durable` as far as they still belong to the log. */
  markDurable(entries: readonly Entry[]): void {
    for (let k = entries.length - 1; k >= 0; k--) {
      const e = entries[k]!;
      if (e.index <= this.durable) return;
      if (e.index <= this.handedOut && this.term(e.index) === e.term) {
        this.durable = e.index;
        return;
      }
    }
  }

  /** Replace the log prefix with a snapshot taken by this member's application at `snap.index`. */
  compact(snap: Snapshot): void {
    if (snap.index <= this.snapshotIndex) return;
    const drop = snap.index - this.snapshotIndex;
    this.entries.splice(0, Math.min(drop, this.entries.length));
    this.snapshot = snap;
    this.snapshotIndex = snap.index;
    this.snapshotTerm = snap.term;
    if (this.handedOut < snap.index) this.handedOut = snap.index;
    if (this.durable < snap.index) this.durable = snap.index;
  }

  /**
   * Install a snapshot received from the leader. Keeps the entries after it if the log already
   * holds the snapshot's last entry (same index and term); otherwise discards the whole log.
   * Returns true when the log suffix was discarded.
   */
  install(snap: Snapshot): boolean {
    const keep = this.term(snap.index) === snap.term;
    if (keep) {
      this.compact(snap);
      return false;
    }
    this.entries = [];
    this.snapshot = snap;
    this.snapshotIndex = snap.index;
    this.snapshotTerm = snap.term;
    this.handedOut = snap.index;
    this.durable = snap.index;
    return true;
  }

  /** True if a log ending at (lastIndex, lastTerm) is at least as up to date as this one (Raft 5.4.1). */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const myTerm = this.lastTerm();
    return lastTerm > myTerm || (lastTerm === myTerm && lastIndex >= this.lastIndex());
  }
}
