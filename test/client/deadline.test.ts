/** Pure parts of the client: per-call deadlines/abort, and the mapping of broker states to outcomes. */
import { describe, expect, it, vi } from 'vitest';
import { Deadline } from '../../src/client/deadline.js';
import { toOutcome } from '../../src/client/outcome.js';
import type { ClientError } from '../../src/errors.js';

describe('Deadline', () => {
  it('fires once with quorate:timeout after timeoutMs', () => {
    vi.useFakeTimers();
    try {
      const fired: ClientError[] = [];
      const d = new Deadline({ timeoutMs: 100 }, (_r, e) => fired.push(e), 'send');
      vi.advanceTimersByTime(99);
      expect(fired).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect(fired).toHaveLength(1);
      expect(fired[0]).toMatchObject({ condition: 'quorate:timeout' });
      expect(fired[0]!.message).toMatch(/send timed out after 100 ms/);
      expect(d.expired).toBe(true);
      vi.advanceTimersByTime(1000);
      expect(fired).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an already-aborted signal fires synchronously, inside the constructor', () => {
    const ac = new AbortController();
    ac.abort(new Error('why'));
    const reasons: string[] = [];
    const d = new Deadline({ signal: ac.signal }, (r, e) => reasons.push(`${r}:${e.condition}`));
    expect(d.expired).toBe(true);
    expect(reasons).toEqual(['aborted:quorate:aborted']);
  });

  it('abort later fires once; clear() stops both timer and listener', () => {
    vi.useFakeTimers();
    try {
      const ac = new AbortController();
      let n = 0;
      const d = new Deadline({ signal: ac.signal, timeoutMs: 50 }, () => n++);
      ac.abort();
      vi.advanceTimersByTime(100);
      expect(n).toBe(1);
      const ac2 = new AbortController();
      const d2 = new Deadline({ signal: ac2.signal, timeoutMs: 50 }, () => n++);
      d2.clear();
      ac2.abort();
      vi.advanceTimersByTime(100);
      expect(n).toBe(1);
      expect(d.expired && d2.expired).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('no options: never fires', () => {
    let n = 0;
    const d = new Deadline(undefined, () => n++);
    expect(d.expired).toBe(false);
    d.clear();
    expect(n).toBe(0);
  });
});

describe('toOutcome', () => {
  it('maps every outcome, keeping rejected errors and modified flags', () => {
    expect(toOutcome({ type: 'accepted' })).toEqual({ state: 'accepted' });
    expect(toOutcome({ type: 'released' })).toEqual({ state: 'released' });
    expect(toOutcome({ type: 'rejected' })).toEqual({ state: 'rejected' });
    expect(
      toOutcome({ type: 'rejected', error: { condition: 'amqp:x', description: 'd', info: { k: 1 } } }),
    ).toEqual({ state: 'rejected', error: { condition: 'amqp:x', description: 'd', info: { k: 1 } } });
    expect(toOutcome({ type: 'modified', deliveryFailed: true })).toEqual({
      state: 'modified',
      deliveryFailed: true,
    });
    expect(
      toOutcome({ type: 'transactional-state', txnId: new Uint8Array([1]), outcome: { type: 'released' } }),
    ).toEqual({ state: 'released' });
  });
});
