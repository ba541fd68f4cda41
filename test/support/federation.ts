/**
 * Shared by the federation tests: a connected client that sends or takes messages by id, and the
 * in-process brokers and clients of one test file.
 */

import { afterEach } from 'vitest';
import { type BrokerNode, startBroker } from '../../src/cluster-broker/assembly/index.js';
import type { FederationConfig } from '../../src/cluster-broker/federation/index.js';
import type { Connection, Receiver, Sender } from '../../src/index.js';
import { connect } from '../../src/index.js';

/**
 * In-process single nodes and clients for one test file, all stopped after each test: call once
 * at the file's top level. `started` takes brokers a test started itself.
 */
export function inProcessBrokers(): {
  started: BrokerNode[];
  broker(clusterId: string, federation?: FederationConfig, port?: number): Promise<BrokerNode>;
  client(url: string): Promise<Connection>;
} {
  const started: BrokerNode[] = [];
  const clients: Connection[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    for (const b of started.splice(0)) await b.stop();
  });
  return {
    started,
    async broker(clusterId, federation, port = 0) {
      const b = await startBroker({
        port,
        host: '127.0.0.1',
        clusterId,
        ...(federation ? { federation } : {}),
      });
      started.push(b);
      return b;
    },
    async client(url) {
      const c = await patientClient(url);
      clients.push(c);
      return c;
    },
  };
}

/** Sends `ids` to `queue` at `urls` (each accepted by the broker), then closes. */
export async function sendIds(urls: string | string[], queue: string, ids: readonly string[]): Promise<void> {
  const conn = await patientClient(urls);
  try {
    const sender = await conn.openSender(queue);
    await Promise.all(ids.map((id) => sender.send({ messageId: id, body: id })));
  } finally {
    await conn.close();
  }
}

/** A client connection that fails over (across `urls`, or to the same one) for as long as a test runs. */
export function patientClient(urls: string | string[]): Promise<Connection> {
  return connect({
    urls,
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

  private readonly sent: Set<string>;

  constructor(sent: Iterable<string>) {
    this.sent = new Set(sent);
  }

  /** `id` was sent too (a later batch). */
  expect(id: string): void {
    this.sent.add(id);
  }

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

/**
 * Hands every delivery of `receiver` to `check` and accepts it; resolves when the receiver
 * closes. An accept that fails is in doubt (its broker died): a redelivery follows if it did not
 * commit. Open the receiver with `dedup: false`, so that a duplicate reaches the check.
 */
export async function consumeInto(receiver: Receiver, check: TotalQueueCheck): Promise<void> {
  for await (const d of receiver) {
    const id = String(d.message.messageId);
    check.handedOut(id);
    d.accept().then(
      () => check.accepted(id),
      () => undefined,
    );
  }
}

/**
 * Sends one message with message-id `id` until the broker accepts it. A send that fails (its
 * member died with the outcome in doubt) is sent again under the same message-id: the duplicate
 * detection (the quorate client desires `quorate:dedup`) makes that exactly once.
 */
export async function sendUntilAccepted(sender: Sender, id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sender.send({ messageId: id, body: id });
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
    }
  }
}

/** Publishes `ids` to `topic` at `urls` (each accepted by the broker, see sendUntilAccepted), then closes. */
export async function publishIds(
  urls: string | string[],
  topic: string,
  ids: readonly string[],
): Promise<void> {
  const conn = await patientClient(urls);
  try {
    const sender = await conn.openSender(topic, { topic: true });
    await Promise.all(ids.map((id) => sendUntilAccepted(sender, id)));
  } finally {
    await conn.close();
  }
}
