import { describe, expect, it } from 'vitest';
import { formatSpread, parseRepeat, spread } from '../../bench/lib/repeats.js';

describe('spread', () => {
  it('gives the median and the range of the values read, skipping the unread ones', () => {
    expect(spread([2.4, 1.95, 2.05])).toEqual({ median: 2.05, min: 1.95, max: 2.4 });
    expect(spread([0.5, null, 0.3, 0.4])).toEqual({ median: 0.4, min: 0.3, max: 0.5 });
    expect(spread([3, 1])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spread([null, null])).toBeNull();
    expect(spread([])).toBeNull();
  });
});

describe('formatSpread', () => {
  it('prints the median then the range at the given decimals, a dash for no value', () => {
    expect(formatSpread({ median: 2.05, min: 1.95, max: 2.4 }, 2)).toBe('2.05 (1.95-2.40)');
    expect(formatSpread({ median: 6.9, min: 6.1, max: 7.8 }, 1)).toBe('6.9 (6.1-7.8)');
    expect(formatSpread(null, 2)).toBe('-');
  });
});

describe('parseRepeat', () => {
  it('takes a positive whole number and refuses anything else', () => {
    expect(parseRepeat(undefined)).toBeUndefined();
    expect(parseRepeat('3')).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'x', '']) expect(() => parseRepeat(bad)).toThrow(/--repeat/);
  });
});
