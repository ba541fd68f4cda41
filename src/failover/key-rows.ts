/**
 * The receiver dedup window's index from key to row (ReceiverDedup): an open-addressing hash
 * table with linear probing over two typed arrays, in place of a Map<string, number>, with a
 * plain Map as its fallback for good once probes run long.
 *
 * Why not a Map: in the window every message costs a lookup that misses, an insert, and (once the
 * window is full) the delete of the id it evicts. V8's Map walks a bucket chain that dereferences
 * each stored key string to compare it, and a delete leaves a hole that only a rehash of the whole
 * table reclaims. Here a slot holds a row number, the row's hash sits in a typed array beside it,
 * so a probe compares two integers and touches a key string only when the hashes are equal. A
 * delete shifts the following run back (no tombstones, no rehash while the pool keeps its size),
 * and a delete by row never compares a string at all. The table has four times as many slots as
 * the pool has rows, so it is at most a quarter full (at half full the longest probe of random
 * keys passes MAX_PROBE now and then, see below).
 *
 * The keys are message-ids chosen by whoever produced the messages, perhaps to hurt this receiver,
 * and the window keeps the promise "never hand the application one id twice". So:
 * - a hit is a hit only when the key strings are equal: a hash collision costs a probe, never a
 *   message (two ids are never merged by their hash);
 * - the hash (FNV-1a over the UTF-16 code units, mixed at the end) is seeded per index from
 *   crypto.getRandomValues, so the slot an id lands in differs from one window to the next;
 * - no entry ever sits more than MAX_PROBE slots past its home slot: an insert or a lookup that
 *   would probe further (ids that collide, by chance or not) moves the index to a Map for good, so
 *   colliding ids can at most bring each message back to a Map's cost, never to O(ids).
 * Measured with random `m-<n>` ids and fresh seeds, tables of 16,384 full rows churned (oldest
 * out, new in): the longest probe of each of 8 tables (100,000 churns) was 10-14 slots at a
 * quarter full and 27-47 at half full (3 of 8 past 32); of 20 tables (200,000 churns) none fell
 * back at a quarter full and all 20 at half full. Hence 4 slots per row (20 bytes a row with the
 * hash: 320 KiB for the 16,384 rows of a default window).
 */

/** slot value of a free slot (a taken slot holds row + 1) */
const EMPTY = 0;
/** no row */
const NIL = -1;
/** the longest probe (slots past the home slot) before the index moves to a Map */
export const MAX_PROBE = 32;
/** table slots per row of the pool (a power of two: the pool's size is one too) */
const SLOTS_PER_ROW = 4;

/** A 32-bit hash of a key (an int32). */
export type KeyHash = (key: string) => number;

/** FNV-1a over the key's UTF-16 code units from `seed`, with a final mix so every bit moves the low bits. */
export function seededHash(seed: number, key: string): number {
  let h = seed ^ key.length;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** A seed no producer can know: from the platform's CSPRNG (Node and browsers alike). */
function randomSeed(): number {
  return globalThis.crypto.getRandomValues(new Int32Array(1))[0]!;
}

export class KeyRows {
  /** row + 1 per slot (EMPTY: free) */
  private slots = new Int32Array(1);
  private mask = 0;
  /** each row's hash (set while the row is in the table) */
  private hashes = new Int32Array(0);
  /** set once probes ran past MAX_PROBE: from then on the index (slots and hashes unused) */
  private map: Map<string, number> | undefined;
  /** the hash of the last key looked up: an insert follows the miss of a lookup of its key */
  private lastKey: string | undefined;
  private lastHash = 0;

  /**
   * The default hash's seed. The default is seededHash called with it, not a closure made per
   * index: optimized code calling a per-index closure holds it as a constant and is thrown away
   * (V8's "weak objects" deopt) and compiled again after each receiver is collected.
   */
  private readonly seed = randomSeed();

  /**
   * `keys[row]` is the key a row in the index holds (the window's own array, read here).
   * @internal `customHash`: tests give one that collides on purpose; the window takes the default.
   */
  constructor(
    private readonly keys: readonly (string | undefined)[],
    private readonly customHash?: KeyHash,
  ) {}

  private hash(key: string): number {
    return this.customHash === undefined ? seededHash(this.seed, key) : this.customHash(key);
  }

  /** True once the index has moved to a Map (for tests and the docs' claims). */
  get fellBack(): boolean {
    return this.map !== undefined;
  }

  /** The row holding `key`, or -1. */
  find(key: string): number {
    if (this.map !== undefined) return this.map.get(key) ?? NIL;
    const hash = this.hash(key);
    this.lastKey = key;
    this.lastHash = hash;
    const slots = this.slots;
    const hashes = this.hashes;
    const keys = this.keys;
    const mask = this.mask;
    // every entry sits at most MAX_PROBE past its home, so a key not met by then is not here;
    // a run that long is no chance, though, so the index moves to a Map all the same
    for (let i = hash & mask, n = 0; n <= MAX_PROBE; i = (i + 1) & mask, n++) {
      const s = slots[i]!;
      if (s === EMPTY) return NIL;
      if (hashes[s - 1] === hash && keys[s - 1] === key) return s - 1;
    }
    this.fallBack();
    return this.map!.get(key) ?? NIL;
  }

  /** Add `row`, whose key (not in the index) is already in `keys`. */
  insert(row: number): void {
    const key = this.keys[row]!;
    if (this.map !== undefined) {
      this.map.set(key, row);
      return;
    }
    this.hashes[row] = key === this.lastKey ? this.lastHash : this.hash(key);
    if (!this.place(row)) this.fallBack();
  }

  /** Take `row` (in the index, its key still in `keys`) out. */
  remove(row: number): void {
    if (this.map !== undefined) {
      this.map.delete(this.keys[row]!);
      return;
    }
    const slots = this.slots;
    const mask = this.mask;
    let hole = this.hashes[row]! & mask;
    while (slots[hole] !== row + 1) hole = (hole + 1) & mask;
    // shift back every later entry of the run that may sit in the hole (its home is not
    // cyclically after the hole), so a probe never stops early at it; an entry more than
    // MAX_PROBE past the hole is more than that past its home, which no entry is
    for (
      let j = (hole + 1) & mask;
      slots[j] !== EMPTY && ((j - hole) & mask) <= MAX_PROBE;
      j = (j + 1) & mask
    ) {
      const home = this.hashes[slots[j]! - 1]! & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        slots[hole] = slots[j]!;
        hole = j;
      }
    }
    slots[hole] = EMPTY;
  }

  /** The pool now has `rows` rows (it only grows): re-place every row in a table of 4 x rows slots. */
  resize(rows: number): void {
    if (this.map !== undefined) return;
    const hashes = new Int32Array(rows);
    hashes.set(this.hashes);
    this.hashes = hashes;
    this.slots = new Int32Array(rows * SLOTS_PER_ROW);
    this.mask = rows * SLOTS_PER_ROW - 1;
    for (let r = 0; r < this.keys.length; r++) {
      if (this.keys[r] !== undefined && !this.place(r)) {
        this.fallBack();
        return;
      }
    }
  }

  /** Puts `row` in the first free slot from its home; false if that is more than MAX_PROBE past it. */
  private place(row: number): boolean {
    const mask = this.mask;
    let i = this.hashes[row]! & mask;
    for (let n = 0; this.slots[i] !== EMPTY; i = (i + 1) & mask) if (++n > MAX_PROBE) return false;
    this.slots[i] = row + 1;
    return true;
  }

  /** Every row holding a key goes into a Map, which answers from now on. */
  private fallBack(): void {
    const map = new Map<string, number>();
    for (let r = 0; r < this.keys.length; r++) {
      const key = this.keys[r];
      if (key !== undefined) map.set(key, r);
    }
    this.map = map;
    this.slots = new Int32Array(0);
    this.hashes = new Int32Array(0);
    this.lastKey = undefined;
  }
}
