import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KeyHash, KeyRows, MAX_PROBE, seededHash } from '../../src/failover/key-rows.js';
import { ReceiverDedup } from '../../src/failover/receiver-dedup.js';
import { ACCEPTED } from '../../src/protocol/index.js';

// The dedup window's key index (key-rows.ts) against ids that collide: by chance, or chosen by a
// producer to collide. A collision may cost probes, never a message, and past MAX_PROBE the index
// moves to a Map.

describe('KeyRows', () => {
  // the seeded hash; 16 hashes around the table's end (long runs that wrap around it); one hash
  const hashes: [string, KeyHash, boolean][] = [
    ['its seeded hash', (key: string) => seededHash(0x1234567, key), false],
    ['16 hashes', (key) => (seededHash(1, key) & 15) - 8, true],
    ['one hash', () => -1, true],
  ];
  it.each(hashes)('finds exactly the rows inserted and not removed, %s', (_name, hash, colliding) => {
    let fellBack = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.nat(60), fc.nat(3)), { minLength: 100, maxLength: 600 }),
        (steps) => {
          const size = 64;
          const keys: (string | undefined)[] = Array.from({ length: size }, () => undefined);
          const index = new KeyRows(keys, hash);
          index.resize(size);
          const model = new Map<string, number>();
          for (const [add, k, variant] of steps) {
            const key = `${k}`.repeat(variant + 1);
            const row = index.find(key);
            expect(row).toBe(model.get(key) ?? -1);
            if (add && row === -1) {
              const free = keys.indexOf(undefined);
              keys[free] = key;
              index.insert(free);
              model.set(key, free);
            } else if (!add && row !== -1) {
              index.remove(row);
              keys[row] = undefined;
              model.delete(key);
            }
          }
          for (const [key, r] of model) expect(index.find(key)).toBe(r);
          if (index.fellBack) fellBack++;
        },
      ),
      { numRuns: 200 },
    );
    if (colliding) expect(fellBack).toBeGreaterThan(0);
    else expect(fellBack).toBe(0);
  });
});

describe('ReceiverDedup with ids that collide', () => {
  /** Admits, hands out and accepts `ids` in turn; returns how many were handed out. */
  function receiveAll(d: ReceiverDedup<string>, ids: string[], now: number): number {
    let handedOut = 0;
    for (const id of ids) {
      const row = d.admit(id, id, now);
      if (typeof row !== 'number') continue;
      d.onHandedOut(id, id, row);
      d.onSettled(id, ACCEPTED, now, row);
      handedOut++;
    }
    return handedOut;
  }

  it('hands out every id once when all share one hash, and moves its index to a Map', () => {
    const d = new ReceiverDedup<string>({}, () => 42);
    const ids = Array.from({ length: 2000 }, (_, i) => `id-${i}`);
    expect(receiveAll(d, ids, 0)).toBe(2000); // nothing taken for a duplicate of another id
    expect(d.indexFellBack).toBe(true);
    expect(receiveAll(d, ids, 1)).toBe(0); // nothing handed out twice
    expect(d.rememberedCount).toBe(2000);
  });

  it('keeps ids apart that share a full hash, in runs too short to move the index', () => {
    // pairs of ids with one hash per pair: every lookup meets its twin's equal hash
    const pairHash = (key: string) => seededHash(7, key);
    const d = new ReceiverDedup<string>({}, (key) => pairHash(`${Number(key.slice(2)) >> 1}`));
    const ids = Array.from({ length: 500 }, (_, i) => `p-${i}`);
    expect(receiveAll(d, ids, 0)).toBe(500);
    expect(receiveAll(d, ids, 1)).toBe(0);
    expect(d.indexFellBack).toBe(false);
  });

  it(`moves to a Map on the id that would sit more than ${MAX_PROBE} slots past its home, not before`, () => {
    const d = new ReceiverDedup<string>({}, () => 0);
    const ids = Array.from({ length: MAX_PROBE + 2 }, (_, i) => `c-${i}`);
    expect(receiveAll(d, ids.slice(0, MAX_PROBE + 1), 0)).toBe(MAX_PROBE + 1);
    expect(d.indexFellBack).toBe(false);
    expect(receiveAll(d, ids, 1)).toBe(1); // the last one only, and the index moves
    expect(d.indexFellBack).toBe(true);
    expect(receiveAll(d, ids, 2)).toBe(0);
  });
});
