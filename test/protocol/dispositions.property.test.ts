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
});
