import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { QueueOptions, SettleOutcome } from '../../../src/cluster-broker/core/events.js';

/** A tiny test driver: builds events with a controllable leader time. */
export class Driver {
  readonly state = new BrokerState();
  time = 1_000;

  declare(queue: string, options: QueueOptions = {}) {
    return this.state.apply({ type: 'declare', leaderTime: this.time, queue, options });
  }
  enqueue(
    queue: string,
    body: string,
    extra: { dedupKey?: string; expiresAt?: number; deliveryCount?: number } = {},
  ) {
    return this.state.apply({
      type: 'enqueue',
      leaderTime: this.time,
      queue,
      message: bytes(body),
      ...extra,
    });
  }
  acquire(queue: string, consumer: string, max = 1) {
    return this.state.apply({ type: 'acquire', leaderTime: this.time, queue, consumer, max });
  }
  /** Acquires one and returns its seq (throws when none). */
  take(queue: string, consumer: string): number {
    const r = this.acquire(queue, consumer);
    if (r.messages.length !== 1) throw new Error(`nothing to acquire from ${queue} for ${consumer}`);
    return r.messages[0].seq;
  }
  settle(consumer: string, seqs: number[], outcome: SettleOutcome) {
    return this.state.apply({ type: 'settle', leaderTime: this.time, consumer, seqs, outcome });
  }
  releaseConsumer(consumer: string) {
    return this.state.apply({ type: 'release-consumer', leaderTime: this.time, consumer });
  }
  expire() {
    return this.state.apply({ type: 'expire', leaderTime: this.time });
  }
  /** Bodies of a queue's available messages, in delivery order. */
  bodies(queue: string): string[] {
    const q = this.state.queues.get(queue);
    const out: string[] = [];
    for (let m = q?.available.head; m; m = m.next) out.push(text(m.bytes));
    return out;
  }
}

export function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

export function text(b: Uint8Array): string {
  return new TextDecoder().decode(b);
}
