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
 */
import { EventEmitter } from 'eventemitter3';
import { copyWith } from '../../common/copy-with.js';
import { notQuorateDescription } from '../../wire-extensions.js';
import { VarintWriter } from '../core/binary.js';
import type { BrokerState } from '../core/broker-state.js';
import { ByteArena, MAX_PACKED_BYTES, viewOf } from '../core/byte-arena.js';
import type { BrokerEvent } from '../core/events.js';
import type { ResultOf } from '../core/results.js';
import { assertEntryFits, MAX_ENTRY_DATA_BYTES } from '../replication/log-records.js';
import type { SoftState } from '../replication/raft/types.js';
import {
  BackendClosedError,
  type BrokerBackend,
  type BrokerBackendEvents,
  OutcomeUnknownError,
} from '../server/backend.js';
import { assertRecordFits, recordBytesAtLeast } from '../store/record-limit.js';
import type { ClusterStateMachine, EntryOutcome } from './cluster-state-machine.js';
import { linkKeyOf, processOf, qualifyConsumer } from './consumer-keys.js';
import {
  type EntryRequest,
  encodeEntry,
  entrySizeHint,
  stampEntryInPlace,
  writeEntry,
} from './entry-codec.js';
import type { AppMessage } from './peer-wire.js';

/** The part of Replica the backend drives. */
export interface ReplicaPort {
  isLeader(): boolean;
  readonly leaderId: string | null;
  readonly term: number;
  /**
   * Appends `data` to the log as leader (throws at once if it cannot). Nothing waits on it: the
   * backend learns the entry's fate from its own apply (onApplied), a change of leader or term
   * (onRole) or the request's deadline, as it does for a request it forwarded.
   */
  append(data: Uint8Array): unknown;
}

/** Sends a member-to-member message; false when the peer is not connected (nothing sent). */
export type AppSender = (m: AppMessage) => boolean;

/** The timers the backend arms (the deterministic simulation passes simulated ones). */
export interface BackendTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** The scratch writer's size: a small entry's (byte-arena.ts MAX_PACKED_BYTES) and some room. */
const SCRATCH_BYTES = 2 * MAX_PACKED_BYTES;

const processTimers: BackendTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Deliberately broken rules, so the broker simulation (test/cluster-broker/cluster/sim-broker.test.ts) can show
 * that its checks catch them. Never set outside tests.
 */
export interface BackendUnsafeFlags {
  /** Settle a pending request on an applied entry with its number whatever the entry's origin. */
  readonly skipOriginCheck?: boolean;
  /** The leader answers an enqueue `enqueued` once it appended it, before commit + apply. */
  readonly ackOnAppend?: boolean;
}

export interface ClusterBackendOptions {
  memberId: string;
  /** `<member>@<incarnation>` of this process. */
  origin: string;
  /** Reject a request not applied within this (outcome unknown). Default 5000 ms. */
  submitTimeoutMs?: number;
  /** The leader's clock for stamping. Default Date.now. */
  clock?: () => number;
  /** Default: the process's setTimeout / clearTimeout. */
  timers?: BackendTimers;
  unsafe?: BackendUnsafeFlags;
}

/**
 * The deadline of the requests made at one reading of the clock: one timer for all of them, not
 * one per request (a publisher's window arrives in a few turns, each with many requests). The
 * timer is cleared once none of them is pending any more, as each request's own was.
 */
interface DeadlineGroup {
  /** The clock when the group's first request was made. */
  readonly at: number;
  /** The armed timer; undefined once cleared or fired. */
  handle: unknown;
  /** Requests of the group still pending. */
  open: number;
}

interface Pending {
  bytes: Uint8Array;
  resolve: (result: unknown) => void;
  reject: (e: Error) => void;
  deadline: DeadlineGroup;
  /**
   * For a claim or acquire: the link key it is for (dropped unsent if the link goes). A settle
   * has none: it carries the client's decision, which must reach the log before the link's
   * release does (a dropped accept would bring the message back).
   */
  linkFor?: string;
  /** Where and in which term it was sent (undefined: not sent yet). */
  sentTo?: string;
  sentTerm?: number;
}

export class ClusterBackend extends EventEmitter<BrokerBackendEvents> implements BrokerBackend {
  serving = false;
  notServingReason: string | undefined = notQuorateDescription('starting');
  readonly origin: string;
  private sm: ClusterStateMachine | undefined;
  private replica: ReplicaPort | undefined;
  private send: AppSender | undefined;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  /** Requests waiting for a reachable leader, in submission order. */
  private parked: number[] = [];
  /** retryParked is sending (see there). */
  private draining = false;
  private retryTimer: unknown;
  /** Link keys with a live consumer here -> whether our claim for it has applied. */
  private readonly links = new Map<string, boolean>();
  private closed = false;
  private readonly timeoutMs: number;
  private readonly clock: () => number;
  private readonly timers: BackendTimers;
  private readonly unsafe: BackendUnsafeFlags;
  private lastLeader: string | null = null;
  private lastTerm = 0;
  /** The newest deadline group: requests made at the same clock reading join it. */
  private deadlineGroup: DeadlineGroup | undefined;
  /** Where small entries are encoded before their copy into `entryChunks`. */
  private scratch = new VarintWriter(SCRATCH_BYTES);
  /**
   * Small entries' bytes (this member's own requests, and on the leader the followers' forwarded
   * ones), back to back in shared chunks rather than a buffer each (a buffer is an allocation and
   * a GC-tracked backing store per message). They live in the Raft log until it is compacted, in
   * log order, so the chunks free in turn.
   */
  private readonly entryChunks = new ByteArena();

  constructor(private readonly opts: ClusterBackendOptions) {
    super();
    this.origin = opts.origin;
    this.timeoutMs = opts.submitTimeoutMs ?? 5000;
    this.clock = opts.clock ?? Date.now;
    this.timers = opts.timers ?? processTimers;
    this.unsafe = opts.unsafe ?? {};
  }

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

  /** The entry of a request: a small one in the shared chunks, a large one in its own buffer. */
  private encode(seq: number, body: EntryRequest): Uint8Array {
    if (entrySizeHint(this.origin, body) > MAX_PACKED_BYTES) return encodeEntry(this.origin, seq, body);
    const w = this.scratch;
    w.pos = 0;
    writeEntry(w, this.origin, seq, body);
    const bytes = viewOf(this.entryChunks.store(w.written()));
    // a hint that fell short grew the scratch buffer: do not keep a large one
    if (w.buf.length > SCRATCH_BYTES) this.scratch = new VarintWriter(SCRATCH_BYTES);
    return bytes;
  }

  /**
   * Sends request `seq` on its way, behind any request still parked: this member's requests
   * reach the log in submission order (a link's settle before its release, a release before the
   * next acquire), so one that cannot leave now holds back the ones after it.
   */
  private route(seq: number): void {
    if (this.parked.length === 0 && this.dispatch(seq)) return;
    this.parked.push(seq);
    this.retryParked();
  }

  /** Proposes (as leader) or forwards request `seq`; false when no leader can be reached now. */
  private dispatch(seq: number): boolean {
    const p = this.pending.get(seq);
    const r = this.replica;
    if (!p) return true; // answered or failed meanwhile: nothing to send
    if (!r) return false;
    if (r.isLeader()) {
      p.sentTo = this.opts.memberId;
      p.sentTerm = r.term;
      try {
        // p.bytes is ours alone and is never sent anywhere else once proposed here
        r.append(stampEntryInPlace(p.bytes, this.clock()));
      } catch (err) {
        this.fail(seq, new OutcomeUnknownError(`proposal failed: ${(err as Error).message}`, { cause: err }));
      }
      return true;
    }
    const leader = r.leaderId;
    if (leader !== null && leader !== this.opts.memberId && this.send) {
      const sent = this.send({ kind: 'forward', from: this.opts.memberId, to: leader, request: p.bytes });
      if (sent) {
        p.sentTo = leader;
        p.sentTerm = r.term;
        return true;
      }
    }
    return false;
  }

  /** Sends the parked requests in order up to the first that still cannot leave; retries later. */
  private retryParked(): void {
    // a request submitted from within a send (re-entrant) joins the end of the line: the loop
    // below sends it in its turn; a second loop would send the ones before it again
    if (this.draining) return;
    this.draining = true;
    let sent = 0;
    try {
      while (sent < this.parked.length && this.dispatch(this.parked[sent]!)) sent++;
    } finally {
      this.draining = false;
      if (sent > 0) this.parked.splice(0, sent);
    }
    if (this.parked.length === 0 || this.retryTimer !== undefined || this.closed) return;
    this.retryTimer = this.timers.set(() => {
      this.retryTimer = undefined;
      this.retryParked();
    }, 25);
  }

  private fail(seq: number, err: Error): void {
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    this.leaveDeadline(p.deadline);
    p.reject(err);
  }

  /**
   * The deadline group of a request made now: the current one when it began at this clock
   * reading and still has a pending request, else a new one with its own timer. Node's timers
   * already start from the event loop's cached time, so requests of one clock reading sharing a
   * timer expire when theirs would have.
   */
  private joinDeadline(): DeadlineGroup {
    const now = this.clock();
    let g = this.deadlineGroup;
    if (g === undefined || g.at !== now || g.handle === undefined) {
      const group: DeadlineGroup = { at: now, handle: undefined, open: 0 };
      group.handle = this.timers.set(() => this.expire(group), this.timeoutMs);
      this.deadlineGroup = g = group;
    }
    g.open++;
    return g;
  }

  /** A request of `g` is no longer pending: the last one clears the group's timer. */
  private leaveDeadline(g: DeadlineGroup): void {
    g.open--;
    if (g.open > 0 || g.handle === undefined) return;
    this.timers.clear(g.handle);
    g.handle = undefined;
  }

  /** `g`'s timer fired: its requests still pending have an unknown outcome. */
  private expire(g: DeadlineGroup): void {
    g.handle = undefined;
    const late = [...this.pending].filter(([, p]) => p.deadline === g).map(([seq]) => seq);
    for (const seq of late) this.fail(seq, new OutcomeUnknownError(`no commit within ${this.timeoutMs} ms`));
  }

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
