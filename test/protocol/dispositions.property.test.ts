import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeliveryState } from '../../src/codec/index.js';
import { DispositionBatcher } from '../../src/protocol/index.js';
import { expectReachesLength } from '../support/property-size.js';

const STATES: (DeliveryState | undefined)[] = [
  undefined,
  { type: 'accepted' },
  { type: 'released' },
  { type: 'rejected' },
  { type: 'rejected', error: { condition: 'amqp:internal-error' } },
  { type: 'modified', deliveryFailed: true },
];

describe('DispositionBatcher (property)', () => {
  it('expanding the ranges gives back exactly each delivery’s state and settled flag', () => {
    const deliveryIds = fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 120, size: 'max' });
    expectReachesLength(deliveryIds, 120);
    fc.assert(
      fc.property(
        deliveryIds,
        fc.array(fc.tuple(fc.integer({ min: 0, max: STATES.length - 1 }), fc.boolean(), fc.boolean()), {
          minLength: 120,
          maxLength: 120,
        }),
        (ids, attrs) => {
          const b = new DispositionBatcher();
          const want = new Map<string, { state: DeliveryState | undefined; settled: boolean }>();
          ids.forEach((id, i) => {
            const [si, settled, role] = attrs[i];
            b.add(role, id, STATES[si], settled);
            want.set(`${role}:${id}`, { state: STATES[si], settled });
          });
          const got = new Map<string, { state: DeliveryState | undefined; settled: boolean }>();
          for (const d of b.take()) {
            for (let id = d.first; id <= (d.last ?? d.first); id++) {
              const key = `${d.role}:${id}`;
              expect(got.has(key)).toBe(false);
              got.set(key, { state: d.state, settled: d.settled === true });
            }
          }
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('settling in arrival order gives one range per run of equal outcomes, each delivery exactly once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 8 })), {
          minLength: 1,
          maxLength: 40,
        }),
        (start, runs) => {
          const b = new DispositionBatcher();
          const want: Array<{ first: number; last: number; state: DeliveryState | undefined }> = [];
          let id = start;
          for (const [si, n] of runs) {
            const state = STATES[si];
            const prev = want[want.length - 1];
            if (prev && prev.state === state) prev.last = id + n - 1;
            else want.push({ first: id, last: id + n - 1, state });
            for (let i = 0; i < n; i++) b.add(false, id++, state, true);
          }
          expect(b.size).toBe(want.length);
          const got = b.take().map((d) => ({ first: d.first, last: d.last ?? d.first, state: d.state }));
          expect(got).toEqual(want);
          expect(b.size).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
