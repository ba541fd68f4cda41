/**
 * A session's deliveries not settled yet, by delivery-id: its outgoing ones (written, ids
 * allocated in order as transfers are written, session-output.ts allocDeliveryId) and its incoming ones
 * (ids the peer assigns, in order from any well-behaved peer). The live ones sit in an array
 * indexed by `id - base`: tracking, looking up and settling a delivery is index arithmetic, no
 * hash-map entry per delivery (a map's entries churn: with deliveries added and settled it
 * reallocates its table every few hundred of them, measured ~50 bytes per incoming delivery),
 * and a disposition range walks a slice. Ids of deliveries never tracked (pre-settled) are holes.
 * One delivery left unsettled far behind the rest (more than MAX_SPAN ids older than the newest)
 * moves to a small map, so the array never spans more than MAX_SPAN ids however long a peer keeps
 * one delivery open. Ids out of order (only a misbehaving peer sends them) keep a map's meaning:
 * an id tracked again replaces the delivery it had, an older one goes to the map, and one far
 * ahead moves what the array holds to the map rather than filling the gap.
 */
import { serialDiff } from './conditions.js';

/** Ids one array spans at most; older unsettled deliveries move to the straggler map. */
const MAX_SPAN = 4096;

interface Identified {
  readonly id: number;
}

export class UnsettledWindow<T extends Identified> {
  private slots: (T | undefined)[] = [];
  /** Index of the first slot in use. */
  private head = 0;
  /** The delivery-id of slots[head]. */
  private base = 0;
  /** Live entries in the slots. */
  private live = 0;
  /** Deliveries older than the array's span (rare: a delivery the peer leaves unsettled). */
  private stragglers: Map<number, T> | undefined;

  get size(): number {
    return this.live + (this.stragglers?.size ?? 0);
  }

  /** Tracks `d` (replacing a delivery tracked with the same id, as a map would). */
  add(d: T): void {
    if (this.live === 0) {
      this.slots.length = 0;
      this.head = 0;
      this.base = d.id;
    }
    let at = serialDiff(d.id, this.base);
    let end = this.slots.length - this.head;
    // an id that may also sit in the map (an out-of-order peer): one place per id
    if (this.stragglers !== undefined && this.stragglers.size > 0) this.stragglers.delete(d.id);
    if (at < 0) {
      this.straggle(d);
      return;
    }
    if (at < end) {
      const i = this.head + at;
      if (this.slots[i] === undefined) this.live++;
      this.slots[i] = d;
      return;
    }
    if (at - end >= MAX_SPAN) {
      // far ahead of everything tracked: the array's deliveries go to the map, the array restarts
      for (let i = this.head; i < this.slots.length; i++) {
        const old = this.slots[i];
        if (old !== undefined) this.straggle(old);
      }
      this.slots.length = 0;
      this.head = 0;
      this.live = 0;
      this.base = d.id;
      at = 0;
      end = 0;
    }
    for (let i = end; i < at; i++) this.slots.push(undefined);
    this.slots.push(d);
    this.live++;
    while (this.slots.length - this.head > MAX_SPAN) this.shiftOldest();
  }

  /** The tracked delivery with this id, or undefined. */
  get(id: number): T | undefined {
    return this.slotAt(id) ?? this.stragglers?.get(id);
  }

  /** The delivery in the array's slot for this id (undefined: none, or not in the array's span). */
  private slotAt(id: number): T | undefined {
    const at = serialDiff(id, this.base);
    return at >= 0 && at < this.slots.length - this.head ? this.slots[this.head + at] : undefined;
  }

  /** Stops tracking `d` (nothing when it is not tracked). */
  delete(d: T): void {
    const at = serialDiff(d.id, this.base);
    if (at >= 0 && at < this.slots.length - this.head) {
      const i = this.head + at;
      if (this.slots[i] !== d) {
        // not in the array: perhaps in the map (an id older than a restarted array's base)
        if (this.stragglers?.get(d.id) === d) this.stragglers.delete(d.id);
        return;
      }
      this.slots[i] = undefined;
      this.live--;
      if (this.live === 0) {
        this.slots.length = 0;
        this.head = 0;
      } else if (i === this.head) {
        this.skipHoles();
      }
      return;
    }
    if (this.stragglers?.get(d.id) === d) this.stragglers.delete(d.id);
  }

  /**
   * Runs `fn` for each delivery tracked with an id in [first, last] (serial order, ids wrap at
   * 2^32), oldest first. `fn` may settle (delete) deliveries and track new ones: each id is
   * looked up afresh, and a range far wider than what is tracked costs only what is tracked.
   */
  forRange(first: number, last: number, fn: (d: T) => void): void {
    if (this.stragglers !== undefined && this.stragglers.size > 0) {
      for (const d of [...this.stragglers.values()])
        if (serialDiff(d.id, first) >= 0 && serialDiff(last, d.id) >= 0) fn(d);
    }
    if (this.live === 0) return;
    const base = this.base;
    const from = Math.max(0, serialDiff(first, base));
    const to = Math.min(serialDiff(last, base), this.slots.length - this.head - 1);
    for (let at = from; at <= to; at++) {
      // the array only: the map's deliveries were walked above
      const d = this.slotAt((base + at) >>> 0);
      if (d !== undefined) fn(d);
    }
  }

  /** Every tracked delivery, oldest first. */
  values(): T[] {
    const out: T[] = this.stragglers === undefined ? [] : [...this.stragglers.values()];
    for (let i = this.head; i < this.slots.length; i++) {
      const d = this.slots[i];
      if (d !== undefined) out.push(d);
    }
    return out;
  }

  /** Stops tracking every delivery `drop` says so of. */
  deleteWhere(drop: (d: T) => boolean): void {
    for (const d of this.values()) if (drop(d)) this.delete(d);
  }

  clear(): void {
    this.slots.length = 0;
    this.head = 0;
    this.live = 0;
    this.stragglers = undefined;
  }

  private straggle(d: T): void {
    this.stragglers ??= new Map();
    this.stragglers.set(d.id, d);
  }

  /** Moves the oldest slot out of the array (into the stragglers when live). */
  private shiftOldest(): void {
    const d = this.slots[this.head];
    if (d !== undefined) {
      this.slots[this.head] = undefined;
      this.live--;
      this.straggle(d);
    }
    this.head++;
    this.base = (this.base + 1) >>> 0;
    this.skipHoles();
  }

  /** Advances the head past settled slots; drops the dead front of the array now and then. */
  private skipHoles(): void {
    const slots = this.slots;
    let head = this.head;
    let base = this.base;
    while (head < slots.length && slots[head] === undefined) {
      head++;
      base = (base + 1) >>> 0;
    }
    if (head === slots.length) {
      slots.length = 0;
      head = 0;
    } else if (head > 1024 && head * 2 > slots.length) {
      this.slots = slots.slice(head);
      head = 0;
    }
    this.head = head;
    this.base = base;
  }
}
