/**
 * The replicated state machine of a cluster member: every committed entry, in log order, applied
 * to this member's own BrokerState. Deterministic (no clock, no I/O): members that applied the
 * same entries hold byte-identical snapshots (test/cluster-broker/cluster/sim-broker.test.ts checks it).
 *
 * Time: the entry's leaderTime (stamped by the leader) replaces the proposer's, and an enqueue's
 * expiresAt moves by the same amount, so TTL and dedup age only ever use the leader's clock.
 */

import { forEachAvailableQueue, queuesHeldBy } from '../core/availability.js';
import { BrokerState } from '../core/broker-state.js';
import { EntryViews } from '../core/byte-arena.js';
import type { BrokerEvent } from '../core/events.js';
import type { ApplyResult, ReleaseResult } from '../core/results.js';
import { type Entry, type Snapshot, snapshotBytes } from '../replication/raft/types.js';
import type { StateMachine } from '../replication/replica.js';
import { linkKeyOf, memberOf, memberOfProcess, processOf } from './consumer-keys.js';
import { type DecodedEntry, decodeEntryAndEvent } from './entry-codec.js';

/** What applying one entry did, for the process that submitted it. */
export type EntryOutcome =
  | {
      ok: true;
      result:
        | ApplyResult
        | ReleaseResult
        | { type: 'claim'; released: number[] }
        | { type: 'federation-owner' };
    }
  | { ok: false; error: Error };

export interface ClusterStateHooks {
  /** Every applied entry that carries an origin (the submitter resolves its pending request). */
  applied?(origin: string, seq: number, outcome: EntryOutcome): void;
  /** Messages may have become available in `queue`. */
  available?(queue: string): void;
  /** `claimant` took over link key `link`: a local link of that key with another owner is stolen. */
  claimed?(link: string, claimant: string): void;
  /** A federation-owner entry applied (`owner`, member@incarnation, runs the links now), or a snapshot restored (undefined). */
  federationOwner?(owner: string | undefined): void;
  /** An entry that does not decode (every member skips it the same way). */
  corrupt?(index: number, error: Error): void;
}

export class ClusterStateMachine implements StateMachine {
  /**
   * Keeps each queued message as a view of its committed entry's bytes, not a copy
   * (docs/cluster-member.md#one-copy): an entry's bytes are never written after it is appended
   * (the leader stamps its time before) and the buffers they lie in are never reused (a
   * follower's socket reads and framing copies, the backend's entry chunks, a record's copy at
   * recovery). A snapshot restored is copied (it would pin the whole snapshot).
   */
  readonly state = new BrokerState(new EntryViews());
  /** Index of the last entry applied (or of the restored snapshot). */
  appliedIndex = 0;

  constructor(private readonly hooks: ClusterStateHooks = {}) {}

  /** The available hook as one function for every applied entry, not a closure each. */
  private readonly onAvailable = (queue: string): void => this.hooks.available?.(queue);

  apply(entry: Entry): void {
    this.appliedIndex = entry.index;
    if (entry.data === null) return; // a new leader's no-op
    let e: DecodedEntry;
    try {
      // the message bytes stay views of the entry, and the state keeps them so (above)
      e = decodeEntryAndEvent(entry.data);
    } catch (err) {
      this.hooks.corrupt?.(entry.index, err as Error);
      return;
    }
    let outcome: EntryOutcome;
    switch (e.body.kind) {
      case 'event':
        outcome = { ok: true, result: this.applyEvent(restamp(e.body.event, e.leaderTime)) };
        break;
      case 'release-owner':
        outcome = { ok: true, result: this.releaseOwner(e.body.member, e.body.keep, e.leaderTime) };
        break;
      case 'claim':
        outcome = {
          ok: true,
          result: { type: 'claim', released: this.claim(e.body.link, e.body.claimant, e.leaderTime) },
        };
        break;
      case 'federation-owner':
        this.hooks.federationOwner?.(e.body.owner);
        outcome = { ok: true, result: { type: 'federation-owner' } };
        break;
    }
    this.hooks.applied?.(e.origin, e.seq, outcome);
  }

  restore(snapshot: Snapshot): void {
    // the owner is not in snapshots: the leader names one again (docs/federation.md#cluster)
    this.hooks.federationOwner?.(undefined);
    this.state.restore(snapshotBytes(snapshot.data));
    this.appliedIndex = snapshot.index;
  }

  /** Parts referencing the queued message bytes: a deep queue is not copied to compact the log. */
  snapshot(): Uint8Array[] {
    return this.state.snapshotParts();
  }

  liveBytes(): number {
    return this.state.liveBytes();
  }

  private applyEvent(event: BrokerEvent): ApplyResult {
    const held = queuesHeldBy(this.state, event);
    const result = this.state.apply(event);
    if (this.hooks.available) forEachAvailableQueue(event, result, held, this.state, this.onAvailable);
    return result;
  }

  /** Releases the given consumers (sorted, so every member does the same whatever its map order). */
  private releaseAll(consumers: string[], leaderTime: number): number[] {
    const released: number[] = [];
    for (const consumer of consumers.sort()) {
      const r = this.applyEvent({ type: 'release-consumer', leaderTime, consumer }) as ReleaseResult;
      released.push(...r.released);
    }
    return released.sort((a, b) => a - b);
  }

  /**
   * The processes of `member` other than `keep` are gone: their consumers are released, and the
   * temporary queues whose owner link they held start their grace period
   * (docs/topics.md#owner-gone), in queue order like every member.
   */
  private releaseOwner(member: string, keep: string, leaderTime: number): ReleaseResult {
    const keepProcess = keep === '' ? undefined : `${member}@${keep}`;
    const gone = this.state
      .listConsumers()
      .filter((c) => memberOf(c) === member && processOf(c) !== keepProcess);
    for (const { queue, holder } of this.state.ownedQueues()) {
      if (holder === undefined || holder === keepProcess || memberOfProcess(holder) !== member) continue;
      this.applyEvent({ type: 'owner-lost', leaderTime, queue, holder });
    }
    return { type: 'release-consumer', released: this.releaseAll(gone, leaderTime) };
  }

  private claim(link: string, claimant: string, leaderTime: number): number[] {
    const predecessors = this.state
      .listConsumers()
      .filter((c) => c !== claimant && processOf(c) !== undefined && linkKeyOf(c) === link);
    const released = this.releaseAll(predecessors, leaderTime);
    this.hooks.claimed?.(link, claimant);
    return released;
  }
}

/** The event as of the leader's clock: leaderTime replaced, an enqueue's expiry shifted alike. */
function restamp(event: BrokerEvent, leaderTime: number): BrokerEvent {
  if (leaderTime <= 0 || leaderTime === event.leaderTime) return event;
  if (event.type === 'enqueue' && event.expiresAt !== undefined) {
    event.expiresAt += leaderTime - event.leaderTime;
  }
  event.leaderTime = leaderTime;
  return event;
}
