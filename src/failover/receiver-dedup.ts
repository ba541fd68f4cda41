/**
 * Per-receiver duplicate suppression by message-id (docs/delivery-contract.md#receiver-dedup).
 *
 * A receiver never hands its application the same message-id twice within the window:
 * - an id the application accepted or rejected: settle the redelivery again with that outcome,
 *   do not hand it out;
 * - an id it released or modified: forgotten, so the redelivery is handed out again;
 * - an id that is buffered or handed out and not yet settled: bind the redelivery to that
 *   pending delivery (the client settles it with whatever the application decides for the
 *   original);
 * - no message-id: no dedup.
 * Remembered settled ids are bounded by count and by age (time passed in, same clock always);
 * pending ids are not bounded (each is a delivery the client holds anyway).
 * Keys are canonical (type and value): string 'a', symbol 'a' and binary 0x61 differ
 * (receiverDedupKey), and compared exactly (no hash that could merge two ids).
 *
 * Storage: no object per id. Every id, pending or remembered, has a row in a pool of parallel
 * arrays (key, state code, token, outcome, last touch, and the prev/next links of the eviction
 * list), reached from its key through KeyRows (key-rows.ts: its own open-addressing index, cheaper
 * than a Map<string, row> per message, and how it stands up to ids made to collide); freed rows are
 * reused through a free list and the pool only grows (in steps) when every row is taken, so the
 * window allocates nothing per message beyond the key string the decoder already made. Remembered
 * rows are also on a doubly linked list in order of last touch (oldest first): eviction unlinks
 * from its head and a re-touch moves a row to its tail, in O(1), and a pending row is never on it,
 * so however long an id stays pending among many settled ones it is neither evicted nor
 * overwritten. Why: the previous window kept an Entry object per id plus an eviction array; each
 * lived through several young-generation collections and died in the old generation. Measured
 * (docs/status.md, load 5-6): a batch receive's client CPU on our single node 11.7 -> 10.6 us/msg
 * in the e2e bench (spread 2-4 us), mark-compacts in a probe's receives 6 -> 2; once the heap is
 * warm the two windows cost the same, and `dedup: false` is still ~1 us/msg cheaper (the index and
 * the key).
 *
 * `T` is the client's token for a pending delivery (whatever it needs to settle it later).
 * The Receiver keys an id once per delivery (receiverDedupKey), then calls admit(key), which
 * answers a row number, and passes key and row back to the later calls (onHandedOut, onSettled,
 * forgetPending): the row is used while it still holds that key, else the key is looked up (the
 * row was freed, e.g. by a transactional settle, and may hold another id by now).
 */
import type { DeliveryState } from '../codec/contract.js';
import { messageIdKey } from '../codec/message-id.js';
import { type KeyHash, KeyRows } from './key-rows.js';

export interface ReceiverDedupOptions {
  /** settled ids remembered, default 10,000 */
  maxIds?: number;
  /** how long a settled id is remembered after it was last seen (ms), default 10 min */
  maxAgeMs?: number;
}

/** Outcomes that end a message's life at the broker: a redelivery is settled again, not handed out. */
export type FinalOutcome = Extract<DeliveryState, { type: 'accepted' } | { type: 'rejected' }>;

/** A redelivery of an id in the window: not handed out. */
export type DedupDuplicate<T> =
  /** do not hand out: settle this transfer with `outcome` now */
  | { action: 'settle'; key: string; outcome: FinalOutcome }
  /** do not hand out: settle this transfer together with the pending delivery `pending` */
  | { action: 'bind'; key: string; pending: T; handedOut: boolean };

/** A row's state. */
const FREE = 0;
const BUFFERED = 1;
const HANDED_OUT = 2;
/** settled accepted or rejected: its outcome is in `outcomes` */
const REMEMBERED = 3;
/** no row (end of a list, or no row hint) */
const NIL = -1;

/**
 * A transactional outcome is not final: it takes effect only if its transaction commits (the
 * client reports the plain outcome then), and after a rollback the redelivery is handed out again.
 */
function finalOutcome(outcome: DeliveryState): FinalOutcome | undefined {
  if (outcome.type === 'accepted' || outcome.type === 'rejected') return outcome;
  return undefined;
}

/**
 * The key this receiver remembers an id by. A string id (the common case: every id the quorate
 * client assigns) is its own key, so the decoded string is hashed as it is, with no key built per
 * delivery; any other id (and a string that happens to start with NUL) is NUL followed by its
 * canonical typed key, which no plain string key starts with, so string 'a', symbol 'a' and
 * binary 0x61 still differ.
 */
export function receiverDedupKey(id: unknown): string | undefined {
  if (typeof id === 'string' && id.charCodeAt(0) !== 0) return id;
  const canonical = messageIdKey(id);
  return canonical === undefined ? undefined : `\u0000${canonical}`;
}

export class ReceiverDedup<T = unknown> {
  readonly maxIds: number;
  readonly maxAgeMs: number;
  /** each row's key (undefined: free), also read by `rows` */
  private readonly keys: (string | undefined)[] = [];
  /** key -> row */
  private readonly rows: KeyRows;
  private tokens: (T | undefined)[] = [];
  /** a remembered row's outcome (the client's shared ACCEPTED, or the rejection it sent) */
  private outcomes: (FinalOutcome | undefined)[] = [];
  private states = new Uint8Array(0);
  /** when a remembered row was last touched */
  private touched = new Float64Array(0);
  /** eviction list (remembered rows) and free list (free rows, through `next` only) */
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private oldest = NIL;
  private newest = NIL;
  private free = NIL;
  private remembered = 0;
  private pending = 0;
  /** the pool grows fourfold up to this many rows, then doubles (grow) */
  private readonly fullRows: number;

  /** @internal `keyHash`: tests give a hash that collides on purpose; the client takes the default. */
  constructor(options: ReceiverDedupOptions = {}, keyHash?: KeyHash) {
    this.rows = new KeyRows(this.keys, keyHash);
    this.maxIds = Math.max(0, options.maxIds ?? 10_000);
    this.maxAgeMs = Math.max(0, options.maxAgeMs ?? 600_000);
    this.fullRows = poolRowsFor(this.maxIds);
  }

  /** Settled ids remembered now. */
  get rememberedCount(): number {
    return this.remembered;
  }
  /** @internal True once the key index has moved to a Map (key-rows.ts: probes ran too long). */
  get indexFellBack(): boolean {
    return this.rows.fellBack;
  }
  /** Ids buffered or handed out, not yet settled. */
  get pendingCount(): number {
    return this.pending;
  }

  /**
   * A transfer arrived with this key (receiverDedupKey). Returns the row to pass back with the key
   * when the delivery is to be handed out (nothing allocated), or what to do with a redelivery.
   * `token` identifies the delivery if it becomes the pending one.
   */
  admit(key: string, token: T, now: number): number | DedupDuplicate<T> {
    this.prune(now);
    const row = this.rows.find(key);
    if (row === NIL) return this.add(key, token, BUFFERED);
    const state = this.states[row]!;
    if (state !== REMEMBERED)
      return { action: 'bind', key, pending: this.tokens[row] as T, handedOut: state === HANDED_OUT };
    // seen again: the broker still has it, so remember it for a full window from now
    this.touch(row, now);
    return { action: 'settle', key, outcome: this.outcomes[row]! };
  }

  /**
   * The delivery with this key (undefined: it has no id) and `row` (from admit; -1 if unknown) was
   * handed out.
   */
  onHandedOut(key: string | undefined, token: T, row = NIL): void {
    if (key === undefined) return;
    const r = this.find(key, row);
    if (r === NIL) this.add(key, token, HANDED_OUT);
    else if (this.states[r] === BUFFERED) this.states[r] = HANDED_OUT;
  }

  /**
   * The application settled the delivery with this key (and `row`) (call when it settles,
   * not when the broker confirms: an accept in doubt must still suppress the redelivery).
   * accepted/rejected are remembered; released, modified and anything else are forgotten so a
   * redelivery is handed out again.
   */
  onSettled(key: string | undefined, outcome: DeliveryState, now: number, row = NIL): void {
    if (key === undefined) return;
    const final = finalOutcome(outcome);
    let r = this.find(key, row);
    if (final === undefined) {
      if (r !== NIL) this.release(r);
    } else {
      if (r === NIL) r = this.add(key, undefined, BUFFERED);
      if (this.states[r] !== REMEMBERED) {
        this.pending--;
        this.remembered++;
        this.states[r] = REMEMBERED;
        this.tokens[r] = undefined;
        this.link(r);
      }
      this.outcomes[r] = final;
      this.touch(r, now);
    }
    this.prune(now);
  }

  /**
   * The connection died: deliveries buffered but not handed out are dropped by the client (the
   * broker offers them again), so forget them. Handed-out ones stay pending. Returns how many.
   */
  connectionLost(): number {
    let dropped = 0;
    for (let r = 0; r < this.states.length; r++) {
      if (this.states[r] === BUFFERED) {
        this.release(r);
        dropped++;
      }
    }
    return dropped;
  }

  /** Drop a pending id (by key and row) without an outcome (e.g. the receiver closed with it buffered). */
  forgetPending(key: string | undefined, row = NIL): void {
    if (key === undefined) return;
    const r = this.find(key, row);
    if (r !== NIL && this.states[r] !== REMEMBERED) this.release(r);
  }

  /** Evict settled ids older than maxAgeMs, then the oldest beyond maxIds. */
  prune(now: number): void {
    while (this.oldest !== NIL) {
      const r = this.oldest;
      if (now - this.touched[r]! < this.maxAgeMs && this.remembered <= this.maxIds) break;
      this.release(r);
    }
  }

  /** The row holding `key`: `hint` while it still does, else looked up; NIL if none. */
  private find(key: string, hint: number): number {
    if (hint >= 0 && hint < this.states.length && this.states[hint] !== FREE && this.keys[hint] === key)
      return hint;
    return this.rows.find(key);
  }

  /** A new pending row for `key`, taken from the free list (the pool doubles when none is free). */
  private add(key: string, token: T | undefined, state: number): number {
    if (this.free === NIL) this.grow();
    const r = this.free;
    this.free = this.next[r]!;
    this.keys[r] = key;
    this.tokens[r] = token;
    this.states[r] = state;
    this.pending++;
    this.rows.insert(r);
    return r;
  }

  /** Forget row `r` (pending or remembered) and put it on the free list. */
  private release(r: number): void {
    if (this.states[r] === REMEMBERED) {
      this.unlink(r);
      this.remembered--;
      this.outcomes[r] = undefined;
    } else {
      this.pending--;
    }
    this.rows.remove(r);
    this.keys[r] = undefined;
    this.tokens[r] = undefined;
    this.states[r] = FREE;
    this.next[r] = this.free;
    this.free = r;
  }

  /** Remembered row `r` was touched now: it becomes the newest in the eviction order. */
  private touch(r: number, now: number): void {
    this.touched[r] = now;
    if (this.newest === r) return;
    this.unlink(r);
    this.link(r);
  }

  /** Append `r` (not on the list) at the newest end of the eviction list. */
  private link(r: number): void {
    this.prev[r] = this.newest;
    this.next[r] = NIL;
    if (this.newest === NIL) this.oldest = r;
    else this.next[this.newest] = r;
    this.newest = r;
  }

  private unlink(r: number): void {
    const p = this.prev[r]!;
    const n = this.next[r]!;
    if (p === NIL) this.oldest = n;
    else this.next[p] = n;
    if (n === NIL) this.newest = p;
    else this.prev[n] = p;
  }

  /**
   * Grow the pool (rows are only ever added here, so this is amortised O(1) per row): fourfold
   * while that stays within the rows a full window of maxIds needs, then doubling. A new
   * receiver's pool climbs to its full size (16,384 rows for the default 10,000 ids) in five
   * steps instead of ten, each step copying every array and re-placing every row in the index;
   * the key, token and outcome arrays take their new length at once, not a push per row (a push
   * that outgrew its backing store copied it).
   */
  private grow(): void {
    const old = this.states.length;
    const fourfold = Math.max(16, old * 4);
    const size = fourfold <= this.fullRows ? fourfold : Math.max(16, old * 2);
    this.states = extend(this.states, new Uint8Array(size));
    this.touched = extend(this.touched, new Float64Array(size));
    this.prev = extend(this.prev, new Int32Array(size));
    this.next = extend(this.next, new Int32Array(size));
    // the new rows, in order, become the free list
    for (let r = old; r < size; r++) this.next[r] = r + 1 < size ? r + 1 : this.free;
    // in place (KeyRows reads `keys`); a hole reads as undefined, a free row
    this.keys.length = size;
    this.tokens.length = size;
    this.outcomes.length = size;
    this.rows.resize(size);
    this.free = old;
  }
}

/** The pool size (a power of two) that holds `maxIds` remembered ids and one more row. */
function poolRowsFor(maxIds: number): number {
  let rows = 16;
  while (rows <= maxIds) rows *= 2;
  return rows;
}

function extend<A extends Uint8Array | Float64Array | Int32Array>(from: A, to: A): A {
  to.set(from);
  return to;
}
