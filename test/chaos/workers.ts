/**
 * The clients of a chaos run: producers that send unique values and record invoke / ok / fail /
 * info, and consumers that record every message handed to the application (with whether its
 * accept() was confirmed). Each worker has its own connection (its own failover, replay journal
 * and receiver dedup), as independent applications would.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Connection,
  type ConnectOptions,
  connect,
  type Receiver,
  SendError,
  type Sender,
} from '../../src/index.js';
import type { History } from './history.js';

export interface WorkerConnectOptions {
  urls: string[];
  extra: Partial<ConnectOptions>;
  containerId: string;
  /** what the worker writes on failover/disconnect (optional) */
  log?: (line: string) => void;
}

/** Client settings for a chaos run: a paused or cut-off member is noticed within ~2 s. */
export async function connectWorker(o: WorkerConnectOptions): Promise<Connection> {
  const conn = await connect({
    urls: o.urls,
    containerId: o.containerId,
    idleTimeoutMs: 2_000,
    timeoutMs: 120_000,
    reconnect: { maxTimeMs: 600_000, maxDelayMs: 1_000, attemptTimeoutMs: 5_000 },
    ...o.extra,
  });
  conn.on('failover', (e) =>
    o.log?.(`${o.containerId}: failover ${e.from} -> ${e.to} in ${e.durationMs} ms, resent ${e.resent}`),
  );
  return conn;
}

export interface ProducerOptions {
  process: string;
  conn: Connection;
  /** addresses of the queues, sent to round-robin */
  addresses: readonly string[];
  /** the addresses are topics: publish (every subscription gets each message) */
  topic?: boolean;
  history: History;
  /** messages per second (paced), and sends in flight at most */
  rate: number;
  window: number;
  sendTimeoutMs: number;
  shouldStop: () => boolean;
  /** every acknowledged value, to know when the drain is complete */
  acknowledged: Set<string>;
}

export interface ProducerStats {
  sent: number;
  ok: number;
  fail: number;
  info: number;
}

export async function runProducer(o: ProducerOptions): Promise<ProducerStats> {
  const stats: ProducerStats = { sent: 0, ok: 0, fail: 0, info: 0 };
  const senders: Sender[] = [];
  for (const a of o.addresses)
    senders.push(await o.conn.openSender(a, { timeoutMs: 120_000, topic: o.topic }));
  const inflight = new Set<Promise<void>>();
  const intervalMs = 1000 / o.rate;
  let nextAt = performance.now();
  let n = 0;
  while (!o.shouldStop()) {
    const wait = nextAt - performance.now();
    if (wait > 0) await sleep(wait);
    nextAt = Math.max(nextAt + intervalMs, performance.now() - 5 * intervalMs);
    if (o.shouldStop()) break;
    const value = `${o.process}-${++n}`;
    const sender = senders[n % senders.length]!;
    o.history.invokeEnqueue(o.process, value);
    stats.sent++;
    const p = sender
      .send({ messageId: value, durable: true, body: value }, { timeoutMs: o.sendTimeoutMs })
      .then(
        (r) => {
          if (r.state === 'accepted') {
            stats.ok++;
            o.acknowledged.add(value);
            o.history.completeEnqueue(o.process, 'ok', value);
          } else {
            // rejected / released / modified: the broker did not take it
            stats.fail++;
            o.history.completeEnqueue(o.process, 'fail', value);
          }
        },
        (e: unknown) => {
          const surelyNotSent = e instanceof SendError && !e.inDoubt;
          if (surelyNotSent) stats.fail++;
          else stats.info++;
          o.history.completeEnqueue(o.process, surelyNotSent ? 'fail' : 'info', value);
        },
      )
      .finally(() => inflight.delete(p));
    inflight.add(p);
    while (inflight.size >= o.window) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  return stats;
}

/** A consumer at the end of the drain (diagnoses a stalled one). */
export interface ConsumerInfo {
  process: string;
  url?: string;
  state: string;
  linkCredit: number;
  buffered: number;
  /** why the receiver closed for good, if it did */
  error?: string;
}

/**
 * Logs the receiver of `process` closing for good, and returns what it looks like when asked
 * (its connection's URL, link state, credit, buffered messages, and that error).
 */
export function watchReceiver(
  process: string,
  conn: Connection,
  receiver: Receiver,
  log: (line: string) => void,
): () => ConsumerInfo {
  let error: string | undefined;
  receiver.on('detached', (d) => {
    if (d.closed && d.error) {
      error = d.error.message;
      log(`${process}: receiver closed for good: ${d.error.message}`);
    }
  });
  return () => ({
    process,
    url: conn.url,
    state: receiver.state,
    linkCredit: receiver.linkCredit,
    buffered: receiver.buffered,
    ...(error !== undefined ? { error } : {}),
  });
}

export interface ConsumerOptions {
  process: string;
  receiver: Receiver;
  history: History;
  /** every value handed out (any consumer), to know when the drain is complete */
  seen: Set<string>;
  /** called on every hand-out (drain progress) */
  onMessage: () => void;
}

/** Consumes until the receiver closes; accepts every message without waiting for the last. */
export async function runConsumer(o: ConsumerOptions): Promise<number> {
  let handedOut = 0;
  const accepts = new Set<Promise<void>>();
  try {
    for await (const d of o.receiver) {
      const id = d.message.messageId;
      const body = d.message.body;
      // a message without our id, or whose body is not its id, is counted as unexpected
      const value =
        id === undefined || id === null
          ? '<no message-id>'
          : String(body) === String(id)
            ? String(id)
            : `<body mismatch ${String(id)}>`;
      const op = o.history.dequeue(o.process, value);
      o.seen.add(value);
      handedOut++;
      o.onMessage();
      const p = d
        .accept()
        .then(
          () => {
            op.acceptConfirmed = true;
          },
          () => {
            // in doubt: the message may be offered again (dedup settles it again)
          },
        )
        .finally(() => accepts.delete(p));
      accepts.add(p);
    }
  } catch {
    // the receiver failed for good (its connection gave up): the run's checker judges the rest
  }
  await Promise.all(accepts);
  return handedOut;
}
