/**
 * Coalesces pending dispositions into ranges. Consecutive delivery ids coalesce only when they
 * carry the same role, settled flag and state; different outcomes NEVER share a range (rhea 3.0.5
 * merges them and reports the first one's outcome for all: we must not).
 */
import type { DeliveryState, Disposition } from './codec-port.js';

/** A run of consecutive delivery ids [first, last] with one role, settled flag and state. */
interface Pending {
  role: boolean;
  first: number;
  last: number;
  settled: boolean;
  state: DeliveryState | undefined;
}

/**
 * Outcomes without fields are equal by type; a transactional state by its txn-id and outcome (so
 * a transaction's sends, each answered with the same state, settle in ranges); anything else with
 * fields only by identity.
 */
export function sameState(a: DeliveryState | undefined, b: DeliveryState | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.type !== b.type) return false;
  if (a.type === 'transactional-state') {
    const t = b as typeof a;
    return sameBytes(a.txnId, t.txnId) && sameState(a.outcome, t.outcome);
  }
  return (
    a.type === 'accepted' ||
    a.type === 'released' ||
    (a.type === 'rejected' && !a.error && !('error' in b && b.error))
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether delivery `id` with these settled flag and state continues the run `r` (ids wrap at 2^32). */
function continues(
  r: Pending,
  role: boolean,
  id: number,
  settled: boolean,
  state: DeliveryState | undefined,
) {
  return r.role === role && id === (r.last + 1) >>> 0 && r.settled === settled && sameState(r.state, state);
}

export class DispositionBatcher {
  private pending: Pending[] = [];
  private sorted = true;

  /** Disposition runs queued (not deliveries: consecutive ones share a run). */
  get size(): number {
    return this.pending.length;
  }

  /**
   * Queue one delivery's disposition. The common case, settling deliveries in the order they
   * came with one outcome, extends the last run in place: no entry per delivery.
   */
  add(role: boolean, id: number, state: DeliveryState | undefined, settled: boolean): void {
    const p = this.pending;
    const last = p[p.length - 1];
    if (last) {
      if (continues(last, role, id, settled, state)) {
        last.last = id;
        return;
      }
      if (last.role !== role || last.first > id) this.sorted = false;
    }
    p.push({ role, first: id, last: id, settled, state });
  }

  /** Returns the disposition bodies to send, in order, and empties the batch. */
  take(): Disposition[] {
    const p = this.pending;
    if (p.length === 0) return [];
    this.pending = [];
    if (!this.sorted) {
      // stable: two entries for one id keep their order
      p.sort((x, y) => (x.role === y.role ? x.first - y.first : x.role ? 1 : -1));
      this.sorted = true;
    }
    const out: Disposition[] = [];
    // merge runs that the sort made adjacent (in place: `p` is this batch's own array)
    let cur = p[0];
    for (let i = 1; i < p.length; i++) {
      const n = p[i];
      if (continues(cur, n.role, n.first, n.settled, n.state)) {
        cur.last = n.last;
        continue;
      }
      out.push(toBody(cur));
      cur = n;
    }
    out.push(toBody(cur));
    return out;
  }
}

function toBody(p: Pending): Disposition {
  const d: Disposition = { role: p.role, first: p.first };
  if (p.last !== p.first) d.last = p.last;
  if (p.settled) d.settled = true;
  if (p.state) d.state = p.state;
  return d;
}
