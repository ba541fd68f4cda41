/**
 * A request not applied within `submitTimeoutMs` has an unknown outcome. The requests made at one
 * reading of the clock share one timer (not one each): it fails those of them still pending when
 * it fires, and it is cleared once none is pending, as each request's own timer was.
 */
import { describe, expect, it } from 'vitest';
import { type BackendTimers, ClusterBackend } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { OutcomeUnknownError } from '../../../src/cluster-broker/server/backend.js';
import { HandAppliedLog } from './hand-applied-log.js';

/** Timers the test fires by hand; `armed` holds those set and not cleared. */
class HandTimers implements BackendTimers {
  readonly armed = new Map<number, () => void>();
  private next = 0;
  set(fn: () => void): unknown {
    this.armed.set(++this.next, fn);
    return this.next;
  }
  clear(handle: unknown): void {
    this.armed.delete(handle as number);
  }
  fire(handle: number): void {
    const fn = this.armed.get(handle)!;
    this.armed.delete(handle);
    fn();
  }
}

function setUp() {
  let now = 1000;
  const timers = new HandTimers();
  let backend: ClusterBackend | undefined;
  const sm = new ClusterStateMachine({ applied: (o, seq, outcome) => backend?.onApplied(o, seq, outcome) });
  backend = new ClusterBackend({
    memberId: 'n1',
    origin: processKey('n1', 'a'),
    submitTimeoutMs: 5000,
    clock: () => now,
    timers,
  });
  const log = new HandAppliedLog(sm);
  backend.attach(sm, log, () => false);
  backend.setServing(true);
  const declare = (queue: string) => backend!.submit({ type: 'declare', leaderTime: 0, queue, options: {} });
  return { backend, timers, log, declare, tick: (ms: number) => (now += ms) };
}

describe('cluster backend: request deadlines', () => {
  it('arms one timer for the requests of one clock reading, and clears it when the last is applied', async () => {
    const { backend, timers, log, declare } = setUp();
    const answers = [declare('a'), declare('b'), declare('c')];
    expect(timers.armed.size).toBe(1);
    log.apply(log.proposed[0]!);
    log.apply(log.proposed[1]!);
    expect(timers.armed.size, 'one request of the group still pending').toBe(1);
    log.apply(log.proposed[2]!);
    expect(timers.armed.size, 'nothing pending: the timer is cleared').toBe(0);
    await Promise.all(answers);
    backend.close();
  });

  it('fails only the requests of the group whose timer fired, those still pending', async () => {
    const { backend, timers, log, declare, tick } = setUp();
    const first = [declare('a'), declare('b')];
    tick(1);
    const later = declare('c');
    expect([...timers.armed.keys()]).toEqual([1, 2]);
    log.apply(log.proposed[0]!);
    await first[0];
    timers.fire(1);
    await expect(first[1]).rejects.toBeInstanceOf(OutcomeUnknownError);
    await expect(first[1]).rejects.toThrow('no commit within 5000 ms');
    expect(backend.pendingCount, 'the later request keeps its own deadline').toBe(1);
    log.apply(log.proposed[2]!);
    await later;
    expect(timers.armed.size).toBe(0);
    backend.close();
  });

  it('gives a request made after its group timed out, at the same clock reading, a timer of its own', async () => {
    const { backend, timers, declare } = setUp();
    const first = declare('a');
    timers.fire(1);
    await expect(first).rejects.toBeInstanceOf(OutcomeUnknownError);
    const second = declare('b');
    expect([...timers.armed.keys()]).toEqual([2]);
    timers.fire(2);
    await expect(second).rejects.toBeInstanceOf(OutcomeUnknownError);
    backend.close();
  });
});
