/**
 * A queue's dedup window: message-id keys remembered in log order, forgotten oldest first by
 * count and by age (leader time). A FIFO of (key, time) beside a Set for membership: iterating a
 * Map from its front after many deletes walks V8's deleted slots, which made this O(n) per enqueue.
 */
export class DedupWindow {
  private keys: string[] = [];
  private times: number[] = [];
  private head = 0;
  private readonly members = new Set<string>();

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

  /** Remembers a key not currently in the window (the caller checked `has`). */
  add(key: string, now: number): void {
    if (this.maxCount <= 0) return;
    this.keys.push(key);
    this.times.push(now);
    this.members.add(key);
    this.trim(now);
  }

  /** Forgets entries older than the age limit, then beyond the count limit. */
  trim(now: number): void {
    while (this.head < this.keys.length) {
      const tooOld = this.times[this.head] + this.maxAgeMs <= now;
      if (!tooOld && this.members.size <= this.maxCount) break;
      this.members.delete(this.keys[this.head]);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.keys.length) {
      this.keys = this.keys.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** Entries oldest first (for snapshots). */
  *entries(): IterableIterator<[string, number]> {
    for (let i = this.head; i < this.keys.length; i++) yield [this.keys[i], this.times[i]];
  }

  /** Appends an entry as a snapshot recorded it (already in log order, already trimmed). */
  restoreEntry(key: string, time: number): void {
    this.keys.push(key);
    this.times.push(time);
    this.members.add(key);
  }
}
