/** The demand rule and the route rule of queue federation (docs/federation.md#demand, #loops). */
import { describe, expect, it } from 'vitest';
import { creditToGrant } from '../../../src/cluster-broker/federation/demand.js';
import { routeOf, routeRefusal, withRoute } from '../../../src/cluster-broker/federation/route.js';

describe('demand', () => {
  it('grants the gap between consumer credit and what the local queue holds', () => {
    expect(creditToGrant({ consumerCredit: 10, available: 3, upstreamCredit: 0, moving: 0 })).toBe(7);
  });

  it('counts what is already granted or on its way', () => {
    expect(creditToGrant({ consumerCredit: 10, available: 3, upstreamCredit: 4, moving: 2 })).toBe(1);
    expect(creditToGrant({ consumerCredit: 10, available: 3, upstreamCredit: 5, moving: 2 })).toBe(0);
  });

  it('grants nothing without consumers, or when the queue already holds their credit', () => {
    expect(creditToGrant({ consumerCredit: 0, available: 0, upstreamCredit: 0, moving: 0 })).toBe(0);
    expect(creditToGrant({ consumerCredit: 5, available: 9, upstreamCredit: 0, moving: 0 })).toBe(0);
  });
});

describe('route', () => {
  it('reads the route annotation (a malformed one reads as none)', () => {
    expect(routeOf(undefined)).toEqual([]);
    expect(routeOf({ 'x-opt-quorate-route': ['A', 'B'] })).toEqual(['A', 'B']);
    expect(routeOf({ 'x-opt-quorate-route': 'A' })).toEqual([]);
  });

  it('refuses a move into a cluster on the route, and beyond maxHops', () => {
    expect(routeRefusal(['A', 'B'], 'C', 4)).toBeUndefined();
    expect(routeRefusal(['A', 'B'], 'A', 4)).toMatch(/already passed cluster 'A'/);
    expect(routeRefusal(['A', 'B', 'C', 'D'], 'E', 4)).toMatch(/moved 4 times/);
  });

  it('the moved copy gains the cluster it leaves, other annotations kept', () => {
    expect(withRoute({ other: 1 }, ['A'], 'B')).toEqual({ other: 1, 'x-opt-quorate-route': ['A', 'B'] });
  });
});
