/**
 * Coalesces pending dispositions into ranges. Consecutive delivery ids coalesce only when they
 * carry the same role, settled flag and state; different outcomes NEVER share a range (rhea 3.0.5
 * merges them and reports the first one's outcome for all: we must not).
 */
import type { DeliveryState, Disposition } from './codec-port.js';

interface Pending {
  role: boolean;
  id: number;
  settled: boolean;
  state: DeliveryState | undefined;
}

/** Outcomes without fields are equal by type; anything with fields only by identity. */
export function sameState(a: DeliveryState | undefined, b: DeliveryState | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.type !== b.type) return false;
  return (
    a.type === 'accepted' ||
    a.type === 'released' ||
    (a.type === 'rejected' && !a.error && !('error' in b && b.error))
  );
}

export class DispositionBatcher {
  private pending: Pending[] = [];
  private sorted = true;

  get size(): number {
    return this.pending.length;
  }

  add(role: boolean, id: number, state: DeliveryState | undefined, settled: boolean): void {
    const p = this.pending;
    const last = p[p.length - 1];
    if (last && (last.role !== role || last.id > id)) this.sorted = false;
    p.push({ role, id, settled, state });
  }

  /** Returns the disposition bodies to send, in order, and empties the batch. */
  take(): Disposition[] {
    const p = this.pending;
    if (p.length === 0) return [];
    this.pending = [];
    if (!this.sorted) {
      // stable: two entries for one id keep their order
      p.sort((x, y) => (x.role === y.role ? x.id - y.id : x.role ? 1 : -1));
      this.sorted = true;
    }
    const out: Disposition[] = [];
    let cur = p[0];
    let first = cur.id;
    let last = cur.id;
    for (let i = 1; i < p.length; i++) {
      const n = p[i];
      if (
        n.role === cur.role &&
        n.id === (last + 1) >>> 0 &&
        n.settled === cur.settled &&
        sameState(n.state, cur.state)
      ) {
        last = n.id;
        continue;
      }
      out.push(toBody(cur, first, last));
      cur = n;
      first = last = n.id;
    }
    out.push(toBody(cur, first, last));
    return out;
  }
}

function toBody(p: Pending, first: number, last: number): Disposition {
  const d: Disposition = { role: p.role, first };
  if (last !== first) d.last = last;
  if (p.settled) d.settled = true;
  if (p.state) d.state = p.state;
  return d;
}
