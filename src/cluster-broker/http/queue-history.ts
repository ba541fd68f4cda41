/**
 * Recent queue history for the status page's charts and `/api/queues` rates: once a second it
 * samples each queue's depth and its added/acquired counts from the replicated state (so in a
 * cluster the rates are the whole cluster's, the same on every member), keeping the last five
 * minutes. Costs one pass over the queues per second, nothing per message.
 */
import type { QueueRow } from './monitored-broker.js';

export const SAMPLE_EVERY_MS = 1000;
/** Samples kept per queue: five minutes. */
export const HISTORY_SAMPLES = 300;
/** Rates in `/api/queues` are averaged over this many samples. */
const RATE_WINDOW = 5;
/** Queues charted at most (the deepest and busiest), to bound the page's payload. */
const MAX_CHARTED_QUEUES = 20;

interface Series {
  /** Sample times (ms since the epoch), oldest first. */
  at: number[];
  messages: number[];
  published: number[];
  delivered: number[];
}

/** `GET /api/history`: per queue, one value per sample, oldest first. */
export interface HistoryDocument {
  /** Seconds between samples. */
  intervalSeconds: number;
  /** The charted queues (at most 20, the deepest and busiest), by name. */
  queues: Array<{
    /** The queue's name. */
    name: string;
    /** Sample times, ms since the epoch. */
    at: number[];
    /** Messages in the queue at each sample. */
    messages: number[];
    /** Messages per second added to the queue since the previous sample. */
    publishRate: number[];
    /** Messages per second delivered from the queue since the previous sample. */
    deliverRate: number[];
  }>;
}

export class QueueHistory {
  private readonly series = new Map<string, Series>();

  constructor(private readonly rows: () => QueueRow[]) {}

  /** Takes one sample of every queue (queues gone from the state are forgotten). */
  sample(now: number): void {
    const seen = new Set<string>();
    for (const row of this.rows()) {
      seen.add(row.name);
      let s = this.series.get(row.name);
      if (!s) {
        s = { at: [], messages: [], published: [], delivered: [] };
        this.series.set(row.name, s);
      }
      s.at.push(now);
      s.messages.push(row.messages);
      s.published.push(row.added);
      s.delivered.push(row.acquisitions);
      if (s.at.length > HISTORY_SAMPLES + 1) {
        s.at.shift();
        s.messages.shift();
        s.published.shift();
        s.delivered.shift();
      }
    }
    for (const name of this.series.keys()) if (!seen.has(name)) this.series.delete(name);
  }

  /** Messages per second over the last few samples: [publishRate, deliverRate]. */
  rates(queue: string): [number, number] {
    const s = this.series.get(queue);
    if (!s || s.at.length < 2) return [0, 0];
    const last = s.at.length - 1;
    const first = Math.max(0, last - RATE_WINDOW);
    const seconds = (s.at[last]! - s.at[first]!) / 1000;
    if (seconds <= 0) return [0, 0];
    return [
      rate(s.published[first]!, s.published[last]!, seconds),
      rate(s.delivered[first]!, s.delivered[last]!, seconds),
    ];
  }

  document(): HistoryDocument {
    const ranked = [...this.series.entries()]
      .map(([name, s]) => {
        const [p, d] = this.rates(name);
        return { name, s, weight: (s.messages.at(-1) ?? 0) + p + d };
      })
      .sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name))
      .slice(0, MAX_CHARTED_QUEUES)
      .sort((a, b) => a.name.localeCompare(b.name));
    return {
      intervalSeconds: SAMPLE_EVERY_MS / 1000,
      queues: ranked.map(({ name, s }) => ({
        name,
        at: s.at.slice(1),
        messages: s.messages.slice(1),
        publishRate: perSecond(s.at, s.published),
        deliverRate: perSecond(s.at, s.delivered),
      })),
    };
  }
}

function perSecond(at: number[], counts: number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < at.length; i++) {
    const seconds = (at[i]! - at[i - 1]!) / 1000;
    out.push(rate(counts[i - 1]!, counts[i]!, seconds));
  }
  return out;
}

/** Per second, one decimal; 0 when the count went down (the state was restored from a snapshot). */
function rate(from: number, to: number, seconds: number): number {
  if (seconds <= 0 || to < from) return 0;
  return Math.round(((to - from) / seconds) * 10) / 10;
}
