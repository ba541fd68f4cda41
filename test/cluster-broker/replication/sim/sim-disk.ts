/**
 * A simulated disk: writes land in a volatile buffer and become durable on sync. A crash keeps a
 * random prefix of the unsynced writes (a torn tail) and loses the rest, like a real file system
 * after kill -9 / power loss. Recovery uses the same StoreImage rules as the file storage.
 *
 * `corrupt` flips a byte in what is durable, as a bad disk does to a stopped member, and
 * `load` then recovers the way FileStorage does (file-storage.ts): the checksums find the bad
 * record, the intact prefix is kept and the member starts recovering ('damaged').
 */

import type { InitialState, PersistOps } from '../../../../src/cluster-broker/replication/raft/types.js';
import {
  persistToOps,
  StoreImage,
  type StoreOp,
} from '../../../../src/cluster-broker/replication/store-image.js';
import type { Rng } from './rng.js';

/** What a flipped byte hit. */
export type CorruptionTarget = 'entry' | 'vote record' | 'snapshot';

export class SimDisk {
  private durable = new StoreImage();
  private pending: StoreOp[] = [];

  constructor() {
    // as FileStorage creates a store: blank until the member has caught up once
    this.durable.hardState = { term: 0, vote: null, recovering: 'blank' };
  }

  write(p: PersistOps): void {
    for (const op of persistToOps(p)) this.pending.push(op);
  }

  sync(): void {
    for (const op of this.pending) this.durable.apply(op);
    this.pending = [];
  }

  crash(rng: Rng): number {
    const keep = rng.int(0, this.pending.length);
    for (let i = 0; i < keep; i++) this.durable.apply(this.pending[i]!);
    const lost = this.pending.length - keep;
    this.pending = [];
    return lost;
  }

  /** Does the durable state say the member is recovering? */
  get recovering(): boolean {
    return this.durable.hardState.recovering !== undefined;
  }

  /**
   * Flip a byte in a durable record of a stopped member (nothing pending). Returns what was hit
   * (and the first log index lost, for an entry), or undefined when the disk holds nothing yet.
   */
  corrupt(rng: Rng): string | undefined {
    const d = this.durable;
    const targets: CorruptionTarget[] = ['vote record'];
    if (d.entries.length > 0) targets.push('entry');
    if (d.snapshot) targets.push('snapshot');
    if (d.hardState.term === 0 && targets.length === 1) return undefined;
    const target = rng.pick(targets);
    let what: string = target;
    if (target === 'entry') {
      // the checksum fails there: the intact prefix before it is kept, the rest quarantined
      const k = rng.int(0, d.entries.length - 1);
      what = `entry ${d.entries[k]!.index}`;
      d.entries.length = k;
    } else if (target === 'vote record') {
      // term and vote unknown: restart from the newest term the log and snapshot show
      const lastTerm = d.termAt(d.lastIndex()) ?? 0;
      d.hardState = { term: Math.max(lastTerm, d.snapshot?.term ?? 0), vote: null };
    } else {
      // the log after a compaction starts at the lost snapshot: nothing of it can be applied
      d.snapshot = undefined;
      d.base = { index: 0, term: 0 };
      d.entries = [];
    }
    d.hardState = { ...d.hardState, recovering: 'damaged' };
    return what;
  }

  /** Recovery may rewrite the log (finishing an interrupted compaction); that rewrite is durable. */
  load(): InitialState {
    return this.durable.toInitialState();
  }
}
