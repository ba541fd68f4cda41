/**
 * A simulated disk: writes land in a volatile buffer and become durable on sync. A crash keeps a
 * random prefix of the unsynced writes (a torn tail) and loses the rest, like a real file system
 * after kill -9 / power loss. Recovery uses the same StoreImage rules as the file storage.
 */
import {
  persistToOps,
  StoreImage,
  type StoreOp,
} from '../../../src/cluster-broker/replication/store-image.js';
import type { InitialState, PersistOps } from '../../../src/cluster-broker/replication/types.js';
import type { Rng } from './rng.js';

export class SimDisk {
  private durable = new StoreImage();
  private pending: StoreOp[] = [];

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

  /** Recovery may rewrite the log (finishing an interrupted compaction); that rewrite is durable. */
  load(): InitialState {
    return this.durable.toInitialState();
  }
}
