/**
 * The cluster member's backend (cluster-backend.ts), its requests on their way to the log: the
 * entry's bytes, the route to the leader (proposed here or forwarded), the line of requests
 * waiting for a reachable leader, and the deadlines that fail a request whose outcome is unknown.
 */
import { VarintWriter } from '../core/binary.js';
import { MAX_PACKED_BYTES, viewOf } from '../core/byte-arena.js';
import { OutcomeUnknownError } from '../server/backend.js';
import { ClusterBackendFields, type DeadlineGroup, SCRATCH_BYTES } from './cluster-backend-fields.js';
import {
  type EntryRequest,
  encodeEntry,
  entrySizeHint,
  stampEntryInPlace,
  writeEntry,
} from './entry-codec.js';

export abstract class ClusterBackendRouting extends ClusterBackendFields {
  /** The entry of a request: a small one in the shared chunks, a large one in its own buffer. */
  protected encode(seq: number, body: EntryRequest): Uint8Array {
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
  protected route(seq: number): void {
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
  protected retryParked(): void {
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

  protected fail(seq: number, err: Error): void {
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
  protected joinDeadline(): DeadlineGroup {
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
  protected leaveDeadline(g: DeadlineGroup): void {
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
}
