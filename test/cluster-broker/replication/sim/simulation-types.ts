/** What a run of the Raft cluster simulation (simulation.ts) takes, gives, and queues as events. */
import type { Message, UnsafeFlags } from '../../../../src/cluster-broker/replication/raft/types.js';
import type { UnsafeDriverFlags } from '../../../../src/cluster-broker/replication/replica-seams.js';
import type { StoreLoss } from './sim-member.js';

export interface SimOptions {
  seed: number;
  nodes?: number;
  /** Length of the fault phase, simulated ms. Default 3000. */
  faultMs?: number;
  /** After healing, a new entry must be applied on the whole majority within this many simulated ms. Default 5000. */
  livenessMs?: number;
  /** Bugs of the Raft core for the checker to catch. */
  unsafe?: UnsafeFlags;
  /** Bugs of the Replica driver for the checker to catch (replica-seams.ts). */
  unsafeDriver?: UnsafeDriverFlags;
  /** Keep the last N events for a failure report (0: none; replay a failing seed with it on). */
  trace?: number;
  /** Flip bytes of stopped members' stores (default true; the rate is drawn per seed). */
  corruption?: boolean;
  /**
   * What a damaged store loses, drawn from a stream of its own (default every kind of
   * STORE_LOSSES). `['flip']` replays the seeds as they ran before files could go missing.
   */
  losses?: readonly StoreLoss[];
}

export interface SimResult {
  seed: number;
  ok: boolean;
  error?: string;
  trace?: string[];
  steps: number;
  simMs: number;
  elections: number;
  committed: number;
  /** Stores found corrupt at a restart. */
  corruptions: number;
  /** Each kind of loss, counted when another member was down at the time (a crash besides). */
  lossesWithAnotherDown: Partial<Record<StoreLoss, number>>;
  /** Simulated ms from healing to the first post-heal entry applied on every member. */
  recoveryMs?: number;
}

export type SimEvent =
  | { k: 'deliver'; msg: Message }
  /** A member's timer tick or sync completion; dropped when the member crashed since. */
  | { k: 'run'; node: number; epoch: number; fire: () => void }
  | { k: 'resume'; node: number; epoch: number; ms: number }
  | { k: 'depose'; node: number; epoch: number; term: number }
  | { k: 'rejoin'; node: number }
  /** A step of the figure-8 schedule (figure8.ts); dropped after the heal. */
  | { k: 'script'; fire: () => void }
  | { k: 'propose' }
  | { k: 'fault' }
  | { k: 'heal' };
