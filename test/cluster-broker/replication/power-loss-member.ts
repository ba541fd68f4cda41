/** What the member power-loss tests share: a journal state machine and waits on a Replica's events. */

import type { Entry, Snapshot } from '../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../src/cluster-broker/replication/raft/types.js';
import type { Replica, StateMachine } from '../../../src/cluster-broker/replication/replica.js';

/** The applied payloads, snapshotted as a JSON list. */
export class Journal implements StateMachine {
  items: string[] = [];
  apply(entry: Entry): void {
    if (entry.data) this.items.push(Buffer.from(entry.data).toString('utf8'));
  }
  restore(snapshot: Snapshot): void {
    this.items = JSON.parse(Buffer.from(snapshotBytes(snapshot.data)).toString('utf8')) as string[];
  }
  snapshot(): Uint8Array {
    return Buffer.from(JSON.stringify(this.items));
  }
}

/** Resolves once `replica` leads, or rejects when its storage fails first. */
export function leading(replica: Replica): Promise<void> {
  return new Promise((resolve, reject) => {
    if (replica.isLeader()) return resolve();
    replica.on('role', (s) => {
      if (s.role === 'leader') resolve();
    });
    replica.on('error', reject);
  });
}

/** Resolves once a leader has committed and applied its whole log (its no-op commits everything before it). */
export function appliedAll(leader: Replica): Promise<void> {
  return new Promise((resolve) => {
    const done = () => leader.appliedIndex >= leader.lastIndex && leader.commitIndex >= leader.lastIndex;
    if (done()) return resolve();
    leader.on('applied', () => {
      if (done()) resolve();
    });
  });
}

/**
 * Resolves once `replica` has written the end of its recovery (a new cluster's members all start
 * blank): the 'recovered' event comes after the Ready that cleared the mark was persisted. Call it
 * right after the replica starts, before it can have heard from its peers.
 */
export function joined(replica: Replica): Promise<void> {
  return new Promise((resolve) => {
    if (replica.recovering === null) return resolve();
    replica.once('recovered', () => resolve());
  });
}
