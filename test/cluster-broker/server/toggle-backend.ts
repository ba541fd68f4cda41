/**
 * A BrokerBackend whose serving state a test controls, delegating everything else to a real
 * in-memory LocalBackend (what a cluster member losing quorum looks like to the server).
 */
import { EventEmitter } from 'eventemitter3';
import type { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import type { ResultOf } from '../../../src/cluster-broker/core/results.js';
import type { BrokerBackend, BrokerBackendEvents } from '../../../src/cluster-broker/server/index.js';
import { memoryBackend } from '../../../src/cluster-broker/server/index.js';

export class ToggleBackend extends EventEmitter<BrokerBackendEvents> implements BrokerBackend {
  readonly inner = memoryBackend();
  serving = true;
  notServingReason: string | undefined = undefined;

  constructor() {
    super();
    this.inner.on('available', (q) => this.emit('available', q));
  }

  get state(): BrokerState {
    return this.inner.state;
  }

  now(): number {
    return this.inner.now();
  }

  submit<E extends BrokerEvent>(event: E): Promise<ResultOf<E>> {
    return this.inner.submit(event);
  }

  setServing(serving: boolean, reason?: string): void {
    this.serving = serving;
    this.notServingReason = serving ? undefined : reason;
    this.emit('serving', serving, this.notServingReason);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
