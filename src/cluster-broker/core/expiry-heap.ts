/**
 * Min-heap of messages with an expiry deadline, ordered by (expiresAt, seq): a total order, so the
 * sequence of pops is the same whatever the heap's internal layout (a restored state builds its
 * heap differently and must still behave identically). Entries of messages that left the queue
 * stay until popped (lazy deletion; their bytes were already released by QueuedMessage.kill()),
 * and the heap is rebuilt from its live entries when dead ones outnumber them, so long TTLs on
 * quickly consumed messages do not accumulate dead entries.
 */
import type { QueuedMessage } from './queued-message.js';

function less(a: QueuedMessage, b: QueuedMessage): boolean {
  return a.expiresAt < b.expiresAt || (a.expiresAt === b.expiresAt && a.seq < b.seq);
}

export class ExpiryHeap {
  private items: QueuedMessage[] = [];
  /** Entries whose message is no longer live (an estimate: only drives compaction). */
  private dead = 0;

  /** A message with an entry here left its queue. */
  noteDead(): void {
    this.dead++;
  }

  /** pop() returned a dead entry. */
  deadPopped(): void {
    if (this.dead > 0) this.dead--;
  }

  get size(): number {
    return this.items.length;
  }

  peek(): QueuedMessage | undefined {
    return this.items[0];
  }

  push(m: QueuedMessage): void {
    if (this.dead > 1024 && this.dead * 2 > this.items.length) this.compact();
    const a = this.items;
    a.push(m);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): QueuedMessage | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l], a[m])) m = l;
        if (r < a.length && less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }

  private compact(): void {
    const live = this.items.filter((m) => m.live);
    this.items = [];
    this.dead = 0;
    for (const m of live) this.push(m);
  }
}
