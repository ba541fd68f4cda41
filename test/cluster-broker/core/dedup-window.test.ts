import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupWindow } from '../../../src/cluster-broker/core/dedup-window.js';

/** The window's meaning, written the obvious way: a list of (key, time), oldest first. */
class NaiveWindow {
  entries: Array<[string, number]> = [];
  constructor(
    private readonly maxCount: number,
    private readonly maxAgeMs: number,
  ) {}
  trim(now: number): void {
    while (
      this.entries.length > 0 &&
      (this.entries[0]![1] + this.maxAgeMs <= now || this.entries.length > this.maxCount)
    )
      this.entries.shift();
  }
  has(key: string, now: number): boolean {
    this.trim(now);
    return this.entries.some(([k]) => k === key);
  }
  /** has, then add unless present; `refused` then undoes the add (an enqueue refused). */
  admit(key: string, now: number, refused: boolean): boolean {
    if (this.has(key, now)) return false;
    if (refused || this.maxCount <= 0) return true;
    this.entries.push([key, now]);
    this.trim(now);
    return true;
  }
}

type Op = { kind: 'has' | 'admit' | 'refused' | 'trim'; key: number; dt: number };
const op = fc.record({
  kind: fc.constantFrom<Op['kind']>('has', 'admit', 'admit', 'admit', 'refused', 'trim'),
  key: fc.integer({ min: 0, max: 40 }),
  dt: fc.integer({ min: 0, max: 3 }),
});

describe('DedupWindow', () => {
  it('admits, withdraws and forgets like the naive window, through ring growth and wrap-around', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 1, max: 60 }),
        fc.array(op, { maxLength: 300 }),
        (maxCount, maxAgeMs, ops) => {
          const w = new DedupWindow(maxCount, maxAgeMs);
          const model = new NaiveWindow(maxCount, maxAgeMs);
          let now = 0;
          for (const o of ops) {
            now += o.dt;
            const key = `k${o.key}`;
            if (o.kind === 'has') expect(w.has(key, now)).toBe(model.has(key, now));
            else if (o.kind === 'trim') {
              w.trim(now);
              model.trim(now);
            } else {
              const admitted = w.admit(key, now);
              expect(admitted).toBe(model.admit(key, now, o.kind === 'refused'));
              if (admitted && o.kind === 'refused') w.withdraw(key);
            }
            expect([...w.entries()]).toEqual(model.entries);
            expect(w.size).toBe(model.entries.length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a refused admit at the count limit puts back the entry it forgot', () => {
    const w = new DedupWindow(2, 1000);
    expect(w.admit('a', 1)).toBe(true);
    expect(w.admit('b', 2)).toBe(true);
    expect(w.admit('c', 3)).toBe(true);
    w.withdraw('c');
    expect([...w.entries()]).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(w.has('a', 3)).toBe(true);
    expect(w.has('c', 3)).toBe(false);
  });

  it('keeps log order when the ring grows and wraps with its oldest entry mid-ring', () => {
    const w = new DedupWindow(20, 10);
    for (let i = 0; i < 10; i++) w.admit(`k${i}`, 0);
    // at time 10 those ten age out first: the next twenty start mid-ring, wrap, and grow it
    for (let i = 10; i < 30; i++) w.admit(`k${i}`, 10);
    expect([...w.entries()].map(([k]) => k)).toEqual(Array.from({ length: 20 }, (_, i) => `k${i + 10}`));
    // then the count trims the oldest around the grown ring
    for (let i = 30; i < 75; i++) w.admit(`k${i}`, 11);
    expect([...w.entries()].map(([k]) => k)).toEqual(Array.from({ length: 20 }, (_, i) => `k${i + 55}`));
    expect(w.has('k54', 11)).toBe(false);
    expect(w.has('k55', 11)).toBe(true);
  });

  it('restores snapshot entries in order', () => {
    const w = new DedupWindow(100, 1000);
    for (let i = 0; i < 40; i++) w.restoreEntry(`k${i}`, i);
    expect([...w.entries()].map(([k]) => k)).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`));
    expect(w.admit('k3', 40)).toBe(false);
  });
});
