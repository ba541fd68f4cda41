/**
 * The cluster member's BrokerBackend: broker events go through the replicated log.
 *
 * submit(event): the event (consumer keys qualified with this process, see consumer-keys.ts)
 * becomes an entry request `[origin][seq][event]`. The leader proposes it; a follower forwards it
 * to the leader over the cluster transport. Nobody answers: every member applies every entry and
 * this process resolves its pending request with the result of ITS OWN apply, so a submit
 * resolves once the entry is committed on a majority and applied here (the commit point).
 *
 * Outcome unknown (OutcomeUnknownError, the server closes the connection with
 * amqp:connection:forced): the leader or term changed after the request was sent, or no apply
 * within `submitTimeoutMs`. A request that could not be sent yet (no leader known, leader not
 * connected) waits, unsent, for a leader until the same deadline.
 *
 * Clock and timers are options (default Date.now and setTimeout) so that the broker simulation
 * (test/cluster-broker/cluster/sim/broker-sim.ts) runs this very code on every simulated member.
 *
 * This file is its broker-facing side (submit, request, the replica's and state machine's hooks,
 * close); the class is a chain, one job per file, so the per-message paths stay plain method calls
 * on one object: cluster-backend-fields.ts (every field, the constructor) and
 * cluster-backend-routing.ts (entry bytes, proposing or forwarding, parked requests, deadlines).
 * Its options and ports are in cluster-backend-options.ts.
 */
import { copyWith } from '../../common/copy-with.js';
import { notQuorateDescription } from '../../wire-extensions.js';
import type { BrokerState } from '../core/broker-state.js';
import { viewOf } from '../core/byte-arena.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import { assertEntryFits, MAX_ENTRY_DATA_BYTES } from '../replication/log-records.js';
import type { SoftState } from '../replication/raft/types.js';
import { BackendClosedError, type BrokerBackend, OutcomeUnknownError } from '../server/backend.js';
import { assertRecordFits, recordBytesAtLeast } from '../store/record-limit.js';
import type { AppSender, ReplicaPort } from './cluster-backend-options.js';
import { ClusterBackendRouting } from './cluster-backend-routing.js';
import type { ClusterStateMachine, EntryOutcome } from './cluster-state-machine.js';
import { linkKeyOf, processOf, qualifyConsumer } from './consumer-keys.js';
import { type EntryRequest, stampEntryInPlace } from './entry-codec.js';

// the options and ports, for the importers that name them from here
export type * from './cluster-backend-options.js';

export class ClusterBackend extends ClusterBackendRouting implements BrokerBackend {
  /** Wires the replicated parts in (the state machine exists before the replica starts). */
  attach(sm: ClusterStateMachine, replica: ReplicaPort, send: AppSender): void {
    this.sm = sm;
    this.replica = replica;
    this.send = send;
    this.lastLeader = replica.leaderId;
    this.lastTerm = replica.term;
  }

  get state(): BrokerState {
    if (!this.sm) throw new BackendClosedError('cluster backend not started');
    return this.sm.state;
  }

  now(): number {
    return this.clock();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  setServing(serving: boolean, reason?: string): void {
    if (serving === this.serving) {
      if (!serving) this.notServingReason = reason;
      return;
    }
    this.serving = serving;
    this.notServingReason = serving ? undefined : reason;
    this.emit('serving', serving, this.notServingReason);
  }

  submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    if (this.closed) return Promise.reject(new BackendClosedError('the broker is stopping'));
    // a link going away is forgotten even when its release cannot be submitted now (not quorate)
    if (event.type === 'release-consumer') {
      const link = linkKeyOf(event.consumer);
      this.links.delete(link);
      this.dropUnsent(link);
    }
    if (!this.serving) {
      return Promise.reject(new OutcomeUnknownError(this.notServingReason ?? notQuorateDescription()));
    }
    const qualified = this.qualify(event);
    const linkFor = qualified.type === 'acquire' ? linkKeyOf(qualified.consumer) : undefined;
    // the result is the apply's of this very event: a cast, not a `then` (a promise per message)
    const answer = this.request({ kind: 'event', event: qualified }, linkFor) as Promise<ResultOf<E>>;
    if (this.unsafe.ackOnAppend === true && qualified.type === 'enqueue') this.ackIfAppended(this.seq);
    return answer;
  }

  /**
   * Replicates `body` (also used for the member's own release-owner / expire entries, before it
   * serves). Resolves with the result of this member's apply.
   */
  request(body: EntryRequest, linkFor?: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new BackendClosedError('the broker is stopping'));
    try {
      // refused here, before a buffer of its size is encoded or anything is proposed: only this
      // request's publisher is told (docs/production.md#record-limit)
      if (body.kind === 'event' && !(body.event instanceof Uint8Array))
        assertRecordFits(recordBytesAtLeast(body.event), MAX_ENTRY_DATA_BYTES);
    } catch (err) {
      return Promise.reject(err);
    }
    const seq = ++this.seq;
    const bytes = this.encode(seq, body);
    try {
      assertEntryFits(bytes); // the event's other fields: the entry as the log would hold it
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(seq, {
        bytes,
        resolve,
        reject,
        deadline: this.joinDeadline(),
        linkFor: body.kind === 'claim' ? body.link : linkFor,
      });
      this.route(seq);
    });
  }

  /** A follower's request reached us: propose it if we lead (else drop; its sender times out). */
  onForward(request: Uint8Array): void {
    const r = this.replica;
    if (!r || this.closed || !r.isLeader()) return;
    let stamped: Uint8Array;
    try {
      // the request is a private copy (peer-wire decodeApp): stamp it where it lies
      stamped = stampEntryInPlace(viewOf(this.entryChunks.store(request)), this.clock());
    } catch {
      return;
    }
    try {
      r.append(stamped);
    } catch {
      // the forwarding member learns the fate by its own apply, a leader change or its deadline
    }
  }

  /** Applied-entry hook (from the state machine). */
  onApplied(origin: string, seq: number, outcome: EntryOutcome): void {
    if (origin !== this.origin && this.unsafe.skipOriginCheck !== true) return;
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    this.leaveDeadline(p.deadline);
    if (outcome.ok) p.resolve(outcome.result);
    else p.reject(outcome.error);
  }

  /** Claim hook (from the state machine): another process took over a link key. */
  onClaimed(link: string, claimant: string): void {
    if (processOf(claimant) === this.origin) {
      if (this.links.has(link)) this.links.set(link, true);
      return;
    }
    this.emit('claimed', link);
    // Only a link whose own claim applied earlier is the older one; a link still claiming is newer.
    if (this.links.get(link) === true) {
      this.links.delete(link);
      this.emit('stolen', link);
    }
  }

  /** Role/term/leader changed: requests sent to another leader or term have an unknown outcome. */
  onRole(s: SoftState): void {
    if (s.leaderId === this.lastLeader && s.term === this.lastTerm) return;
    this.lastLeader = s.leaderId;
    this.lastTerm = s.term;
    for (const [seq, p] of this.pending) {
      if (p.sentTo !== undefined && (p.sentTo !== s.leaderId || p.sentTerm !== s.term)) {
        // with no leader a member is not quorate (nothing can commit through it): say so
        const why =
          s.leaderId === null
            ? notQuorateDescription(`lost the leader (term ${s.term}); outcome unknown`)
            : `leader changed to ${s.leaderId} (term ${s.term}); outcome unknown`;
        this.fail(seq, new OutcomeUnknownError(why));
      }
    }
    this.retryParked();
  }

  /** Stops: every pending request fails (outcome unknown: they may still commit). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer !== undefined) this.timers.clear(this.retryTimer);
    for (const seq of [...this.pending.keys()])
      this.fail(seq, new OutcomeUnknownError('the broker is stopping'));
  }

  // ---- internals ----

  /** The ackOnAppend bug (BackendUnsafeFlags): a request this leader proposed, answered now. */
  private ackIfAppended(seq: number): void {
    if (this.pending.get(seq)?.sentTo !== this.opts.memberId) return;
    this.onApplied(this.origin, seq, { ok: true, result: { type: 'enqueue', status: 'enqueued', seq: -1 } });
  }

  /**
   * A link that went away here must never act later. A claim (or acquire) parked while this
   * member had no reachable leader (a minority partition) would otherwise be sent once the
   * partition heals: a claim committed after the claim of the member the client re-attached to
   * meanwhile detaches that live link with amqp:link:stolen; an acquire takes messages for a
   * consumer nobody holds. A request already sent commits in order or is lost.
   */
  private dropUnsent(link: string): void {
    for (const [seq, p] of this.pending) {
      if (p.linkFor === link && p.sentTo === undefined) {
        this.fail(seq, new OutcomeUnknownError(`link ${link} went away before its request was sent`));
      }
    }
    // their seqs stay in `parked` until its next pass, which skips requests no longer pending
  }

  /** Consumer keys of this process; a link's first event here claims its key cluster-wide first. */
  private qualify<E extends BrokerEvent>(event: E): E {
    if (event.type === 'commit') {
      return { ...event, events: event.events.map((e) => this.qualify(e)) };
    }
    if (
      event.type !== 'acquire' &&
      event.type !== 'settle' &&
      event.type !== 'release-consumer' &&
      event.type !== 'hold-unsettled'
    )
      return event;
    const link = linkKeyOf(event.consumer);
    const consumer = qualifyConsumer(this.origin, link);
    if (event.type === 'release-consumer' || event.type === 'hold-unsettled') {
      return { ...event, consumer };
    }
    if (!this.links.has(link)) {
      this.links.set(link, false);
      this.request({ kind: 'claim', link, claimant: consumer }).catch(() => {
        // a lost claim only leaves a half-open predecessor elsewhere attached until it notices
      });
    }
    // copyWith, not a spread: acquire and settle events come without `link` (common/copy-with.ts)
    return copyWith(copyWith(event, 'consumer', consumer), 'link', event.link ?? link);
  }
}
