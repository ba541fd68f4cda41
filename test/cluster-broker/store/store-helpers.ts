/** Shared setup for the event-store tests: event batches, the state they build, and reading segments back. */
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import type { EventStore, StoreOptions } from '../../../src/cluster-broker/store/event-store.js';
import { SEGMENT_HEADER_BYTES } from '../../../src/cluster-broker/store/segment-header.js';
import { bytes } from '../core/helpers.js';

export const opts: StoreOptions = { clock: () => 1 };

export function events(n: number, body = 'x'.repeat(100)): BrokerEvent[] {
  const out: BrokerEvent[] = [{ type: 'declare', leaderTime: 10, queue: 'q', options: {} }];
  for (let i = 1; i < n; i++) {
    out.push({
      type: 'enqueue',
      leaderTime: 10 + i,
      queue: 'q',
      message: bytes(`${i}:${body}`),
      dedupKey: `k${i}`,
    });
  }
  return out;
}

/** A consumer takes up to 10 messages of queue q and accepts them, durably. */
export async function consumeTen(store: EventStore): Promise<void> {
  const got = store.commit({ type: 'acquire', leaderTime: 500, queue: 'q', consumer: 'c/1', max: 10 });
  const seqs = got.result.messages.map((m) => m.seq);
  await store.commit({
    type: 'settle',
    leaderTime: 500,
    consumer: 'c/1',
    seqs,
    outcome: { type: 'accepted' },
  }).durable;
}

export function reference(evs: BrokerEvent[]): Uint8Array {
  const s = new BrokerState();
  for (const e of evs) s.apply(e);
  return s.snapshot();
}

export async function onlySegment(dir: string): Promise<string> {
  const segs = (await readdir(dir)).filter((f) => f.endsWith('.seg'));
  expect(segs).toHaveLength(1);
  return join(dir, segs[0]);
}

/** Bytes a segment takes for these events (its header, then an 8-byte header + payload each). */
export async function sizeAfter(evs: BrokerEvent[]): Promise<number> {
  return evs.reduce((n, e) => n + 8 + encodeEvent(e).length, SEGMENT_HEADER_BYTES);
}

export async function copyDir(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const f of await readdir(from)) await copyFile(join(from, f), join(to, f));
}
