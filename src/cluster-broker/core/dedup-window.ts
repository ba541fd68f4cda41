/**
 * A queue's dedup window: message-id keys remembered in log order, forgotten oldest first by
 * count and by age (leader time). A FIFO of (key, time) beside a Set for membership: iterating a
 * Map from its front after many deletes walks V8's deleted slots, which made this O(n) per enqueue.
 * The FIFO is a ring (a power of two long, grown by doubling), so forgetting never copies the window.
 */
export class DedupWindow {
  private keys: string[] = new Array<string>(16).fill('');
  private times = new Float64Array(16);
  /** Ring slot of the oldest entry, and how many entries the ring holds. */
  private head = 0;
  private count = 0;
  private readonly members = new Set<string>();
  /**
   * What the last `admit` forgot to stay within the count (if `evicted`): `withdraw` puts it
   * back, so an admit then withdraw leaves the window as it was.
   */
  private evictedKey = '';
  private evictedTime = 0;
  private evicted = false;

  constructor(
    private readonly maxCount: number,
    private readonly maxAgeMs: number,
  ) {}

  get size(): number {
    return this.members.size;
  }

  has(key: string, now: number): boolean {
    this.trim(now);
    return this.members.has(key);
  }

  /**
   * `has` then, for a new key, remembering it, in one hash operation (the Set's size tells
   * whether the add was new): true when `key` was not in the window. The caller whose enqueue is
   * then refused calls `withdraw(key)`.
   */
  admit(key: string, now: number): boolean {
    this.trim(now);
    if (this.maxCount <= 0) return true; // dedup disabled: nothing is remembered
    const before = this.members.size;
    this.members.add(key);
    if (this.members.size === before) return false;
    this.push(key, now);
    // trim(now) above left nothing too old and at most maxCount: only the count can be over, by one
    this.evicted = this.count > this.maxCount;
    if (this.evicted) {
      this.evictedKey = this.keys[this.head]!;
      this.evictedTime = this.times[this.head]!;
      this.shift();
    }
    return true;
  }

  /** Undoes the `admit` that just returned true for `key` (its enqueue was refused). */
  withdraw(key: string): void {
    if (this.maxCount <= 0) return;
    this.count--;
    this.keys[(this.head + this.count) & (this.keys.length - 1)] = '';
    this.members.delete(key);
    if (!this.evicted) return;
    // the entry admit forgot goes back in front, where it was
    this.head = (this.head - 1) & (this.keys.length - 1);
    this.keys[this.head] = this.evictedKey;
    this.times[this.head] = this.evictedTime;
    this.count++;
    this.members.add(this.evictedKey);
    this.evicted = false;
  }

  /** Forgets entries older than the age limit, then beyond the count limit. */
  trim(now: number): void {
    while (this.count > 0) {
      const tooOld = this.times[this.head]! + this.maxAgeMs <= now;
      if (!tooOld && this.count <= this.maxCount) break;
      this.shift();
    }
  }

  /** Entries oldest first (for snapshots). */
  *entries(): IterableIterator<[string, number]> {
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & (this.keys.length - 1);
      yield [this.keys[at]!, this.times[at]!];
    }
  }

  /** Appends an entry as a snapshot recorded it (already in log order, already trimmed). */
  restoreEntry(key: string, time: number): void {
    this.push(key, time);
    this.members.add(key);
  }

  /** Appends at the tail, growing the ring when full. */
  private push(key: string, time: number): void {
    if (this.count === this.keys.length) this.grow();
    const at = (this.head + this.count) & (this.keys.length - 1);
    this.keys[at] = key;
    this.times[at] = time;
    this.count++;
  }

  /** Forgets the oldest entry. */
  private shift(): void {
    this.members.delete(this.keys[this.head]!);
    this.keys[this.head] = ''; // no reference kept to a forgotten key
    this.head = (this.head + 1) & (this.keys.length - 1);
    this.count--;
  }

  /** Doubles the ring, oldest entry first at slot 0. */
  private grow(): void {
    const n = this.keys.length;
    const keys = new Array<string>(n * 2).fill('');
    const times = new Float64Array(n * 2);
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & (n - 1);
      keys[i] = this.keys[at]!;
      times[i] = this.times[at]!;
    }
    this.keys = keys;
    this.times = times;
    this.head = 0;
  }
}
