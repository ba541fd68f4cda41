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
