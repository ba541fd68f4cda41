/** Shared by the federation tests: a connected client that sends or takes messages by id. */

import type { Connection } from '../../src/index.js';
import { connect } from '../../src/index.js';

/** Sends `ids` to `queue` at `url` (each accepted by the broker), then closes. */
export async function sendIds(url: string, queue: string, ids: readonly string[]): Promise<void> {
  const conn = await connect({ urls: url, reconnect: false });
  try {
    const sender = await conn.openSender(queue);
    await Promise.all(ids.map((id) => sender.send({ messageId: id, body: id })));
  } finally {
    await conn.close();
  }
}

/** A client connection that fails over (retries the same URL) for as long as a test runs. */
export function patientClient(url: string): Promise<Connection> {
  return connect({
    urls: url,
    reconnect: { maxTimeMs: 120_000, maxDelayMs: 200 },
    timeoutMs: 60_000,
  });
}

/** GET `path` of a monitoring server as JSON. */
export async function getJson<T>(httpPort: number, path: string): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${httpPort}${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
  return (await res.json()) as T;
}

/**
 * The total-queue check of one run: every message sent must be consumed once. `received` counts
 * every hand-out per id, `confirmed` every accept the broker confirmed; a redelivery after an
 * accept that was in doubt (its broker died) is not a duplicate, one after a confirmed accept is.
 */
export class TotalQueueCheck {
  private readonly received = new Map<string, number>();
  private readonly confirmed = new Set<string>();
  private duplicated = 0;
  private unexpected = 0;

  constructor(private readonly sent: ReadonlySet<string>) {}

  /** A delivery of `id` was handed out. */
  handedOut(id: string): void {
    if (!this.sent.has(id)) this.unexpected++;
    if (this.confirmed.has(id)) this.duplicated++;
    this.received.set(id, (this.received.get(id) ?? 0) + 1);
  }

  /** The broker confirmed the accept of `id`. */
  accepted(id: string): void {
    this.confirmed.add(id);
  }

  /** Ids handed out at least once. */
  get seen(): number {
    return this.received.size;
  }

  result(): { lost: number; duplicated: number; unexpected: number } {
    let lost = 0;
    for (const id of this.sent) if (!this.received.has(id)) lost++;
    return { lost, duplicated: this.duplicated, unexpected: this.unexpected };
  }
}
