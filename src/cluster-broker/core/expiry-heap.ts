/**
 * Min-heap of messages with an expiry deadline, ordered by (expiresAt, seq): a total order, so the
 * sequence of pops is the same whatever the heap's internal layout (a restored state builds its
 * heap differently and must still behave identically). Entries of messages that left the queue
 * stay until popped (lazy deletion; their bytes were already released by QueuedMessage.kill()).
 */
import type { QueuedMessage } from './queued-message.js';

function less(a: QueuedMessage, b: QueuedMessage): boolean {
  return a.expiresAt < b.expiresAt || (a.expiresAt === b.expiresAt && a.seq < b.seq);
}

export class ExpiryHeap {
  private readonly items: QueuedMessage[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): QueuedMessage | undefined {
    return this.items[0];
  }

  push(m: QueuedMessage): void {
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
}
