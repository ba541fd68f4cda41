import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/common/random.js';
import { ReconnectPolicy } from '../../src/failover/reconnect-policy.js';
import { ServerPool } from '../../src/failover/server-pool.js';

const pool = () => new ServerPool(['amqp://a:1', 'amqp://b:2'], { randomize: false });

describe('ReconnectPolicy', () => {
  it('first attempt after a loss is immediate, then exponential, capped', () => {
    const p = new ReconnectPolicy({ minTimeout: 100, factor: 2, maxTimeout: 1000, randomize: false });
    expect([0, 1, 2, 3, 4, 5].map((f) => p.delayFor(f))).toEqual([0, 100, 200, 400, 800, 1000]);
  });

  it('jitter stays within [base, base * (1 + jitter)] and is reproducible from the seed', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seed, f, jitter) => {
          const p = new ReconnectPolicy({
            minTimeout: 50,
            factor: 2,
            maxTimeout: 60_000,
            jitter,
            random: seededRandom(seed),
          });
          const q = new ReconnectPolicy({
            minTimeout: 50,
            factor: 2,
            maxTimeout: 60_000,
            jitter,
            random: seededRandom(seed),
          });
          const base = 50 * 2 ** (f - 1);
          const d = p.delayFor(f);
          expect(d).toBe(q.delayFor(f));
          expect(d).toBeGreaterThanOrEqual(Math.min(60_000, Math.round(base)));
          expect(d).toBeLessThanOrEqual(Math.min(60_000, Math.round(base * (1 + jitter))));
        },
      ),
    );
  });

  it('gives up by attempts like p-retry (retries after the first attempt)', () => {
    const p = new ReconnectPolicy({ retries: 2, randomize: false });
    const pl = pool();
    expect(p.next({ failures: 0, startedAt: 0 }, 0, pl).kind).toBe('attempt');
    expect(p.next({ failures: 2, startedAt: 0 }, 0, pl)).toMatchObject({ kind: 'attempt', attempt: 3 });
    expect(p.next({ failures: 3, startedAt: 0 }, 0, pl)).toMatchObject({
      kind: 'exhausted',
      reason: 'attempts',
    });
    expect(p.shouldGiveUp(2, 0)).toBe(false);
    expect(p.shouldGiveUp(3, 0)).toBe(true);
  });

  it('gives up by total time and never schedules past it', () => {
    const p = new ReconnectPolicy({ minTimeout: 1000, maxRetryTime: 5000, randomize: false });
    const pl = pool();
    expect(p.next({ failures: 0, startedAt: 0 }, 5000, pl)).toMatchObject({
      kind: 'exhausted',
      reason: 'time',
    });
    const d = p.next({ failures: 5, startedAt: 0 }, 4500, pl);
    expect(d).toMatchObject({ kind: 'attempt', delayMs: 500 });
    expect(p.shouldGiveUp(1, 5000)).toBe(true);
  });

  it('waits for a not-quorate member whose backoff is the only way forward', () => {
    const pl = new ServerPool(['amqp://a:1'], {
      randomize: false,
      notQuorateBackoff: { initialMs: 3000, jitter: 0 },
    });
    pl.notQuorate('a:1', 0);
    const p = new ReconnectPolicy({ minTimeout: 100, randomize: false });
    expect(p.next({ failures: 1, startedAt: 0 }, 0, pl)).toMatchObject({ kind: 'attempt', delayMs: 3000 });
    const tight = new ReconnectPolicy({ minTimeout: 100, randomize: false, maxRetryTime: 2000 });
    expect(tight.next({ failures: 1, startedAt: 0 }, 0, pl)).toMatchObject({
      kind: 'exhausted',
      reason: 'time',
    });
  });

  it('exposes p-retry options', () => {
    const p = new ReconnectPolicy({
      retries: 5,
      factor: 3,
      minTimeout: 10,
      maxTimeout: 99,
      maxRetryTime: 1234,
    });
    expect(p.toPRetryOptions()).toEqual({
      retries: 5,
      factor: 3,
      minTimeout: 10,
      maxTimeout: 99,
      randomize: true,
      maxRetryTime: 1234,
    });
    expect(new ReconnectPolicy({ randomize: false }).toPRetryOptions().randomize).toBe(false);
    expect(() => new ReconnectPolicy({ factor: -1 })).toThrow();
  });
});
